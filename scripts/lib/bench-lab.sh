# shellcheck shell=bash
# Shared by the benchmarks on test hosts (scripts/lib/*-bench.sh): release binaries, a scratch directory, a lab of
# test hosts, processes started in its hosts, and a cleanup that ends them and removes the lab.
#   source scripts/lib/bench-lab.sh; bench_lab_up NAME HOSTS
# Sets root, bin (release binaries), work (scratch), lab; defines in_host (foreground) and spawn_in (background,
# remembered and ended by the cleanup). Callers run as root.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=""
lab=""
spawned=()

bench_cleanup() {
    local pid
    for pid in ${spawned[@]+"${spawned[@]}"}; do kill "$pid" 2>/dev/null || true; done
    sleep 0.3
    [[ -z $lab ]] || "$root/scripts/testnet" down "$lab" >/dev/null 2>&1 || true
    [[ -z $work ]] || rm -rf "$work"
}

# Builds the release daemon and client, makes the scratch directory and a lab of HOSTS test hosts named NAME-….
bench_lab_up() {
    local name=$1 hosts=$2
    [[ $(id -u) -eq 0 ]] || { echo "bench $name: needs root (test hosts)" >&2; exit 1; }
    cd "$root" || exit 1
    swift build -c release --product sessiond >&2
    swift build -c release --product session-client >&2
    # shellcheck disable=SC2034 # used by the scripts that source this file
    bin=$(swift build -c release --show-bin-path)
    work=$(mktemp -d)
    trap bench_cleanup EXIT
    lab=$("$root/scripts/testnet" up "$hosts" --ttl 900 --prefix "$name")
}

# Runs a command in host I and waits for it.
in_host() { "$root/scripts/testnet" exec "$lab" "$@"; }

# Starts a command in host I in the background (testnet execs, so the pid is the command's); its pid is in
# $spawned_pid, and the cleanup ends it.
spawn_in() {
    "$root/scripts/testnet" exec "$lab" "$@" &
    spawned_pid=$!
    spawned+=("$spawned_pid")
}
