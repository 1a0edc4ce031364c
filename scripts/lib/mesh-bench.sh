#!/usr/bin/env bash
# A mesh of N test hosts, each with its own avahi-daemon and a release sessiond with discovery on, all started at
# once: the time from the last start until every daemon has N-1 connected peers, each daemon's anonymous memory, and
# its CPU time idle and under load (the three bubble holders move them at 60 Hz, every other daemon sends a
# move-sized unreliable message to every peer at 60 Hz). Run by `scripts/bench mesh N`; needs root.
#   mesh-bench.sh N [--json] [--seconds S] [--secret | --insecure] [--static] [--logs DIR]
# Links are encrypted (admission open, or the secret with --secret); --insecure measures without the handshake.
# --static runs the daemons without avahi (--no-discovery), each given host 1's address only: the rest of the mesh
# comes from the members exchange. --logs keeps each daemon's debug log in DIR/hI.log.
set -euo pipefail

die() {
    echo "bench mesh: $*" >&2
    exit 2
}
[[ $# -ge 1 && $1 =~ ^[0-9]+$ && $1 -ge 2 && $1 -le 64 ]] || die "needs a host count 2...64 first"
hosts=$1
shift
json=0
seconds=10
secret=0
insecure=0
static=0
logs=""
while (($#)); do
    case "$1" in
        --json) json=1 ;;
        --secret) secret=1 ;;
        --insecure) insecure=1 ;;
        --static) static=1 ;;
        --logs)
            [[ $# -ge 2 && -d $2 ]] || die "--logs needs a directory"
            logs=$(cd "$2" && pwd)
            shift
            ;;
        --seconds)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]?$ ]] || die "--seconds needs 1...99"
            seconds=$2
            shift
            ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done
# shellcheck source=scripts/lib/bench-lab.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lab.sh"
bench_lab_up mesh "$hosts"

extra=(--admission open)
((insecure)) && extra+=(--insecure)
if ((secret)); then
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/secret"
    chmod 600 "$work/secret"
    extra=(--secret-file "$work/secret")
fi
holders=()
daemons=()
avahis=()
for i in $(seq "$hosts"); do
    holders+=("$("$root/scripts/testnet" pid "$lab" "$i")")
    avahis+=("$(cat "${TMPDIR:-/tmp}/lansession-testnet/$lab/h$i.avahi.pid")")
done
# The lab's avahi-daemons register their host names when it comes up: wait (at most 20 s) until they are quiet, so
# that what is measured is the daemons' start and not the lab's.
avahi_ticks() {
    local pid total=0 fields
    for pid in "${avahis[@]}"; do
        read -ra fields <"/proc/$pid/stat"
        total=$((total + fields[13] + fields[14]))
    done
    echo "$total"
}
quiet=0
previous=$(avahi_ticks)
for _ in $(seq 40); do
    sleep 0.5
    now=$(avahi_ticks)
    if ((now - previous <= 2)); then quiet=$((quiet + 1)); else quiet=0; fi
    previous=$now
    ((quiet < 2)) || break
done

# The watcher starts first and waits on a pipe for the start time and the daemons' pids: a Python started after the
# daemons would compete with them for the CPU and see them later than they are ready.
start_pipe="$work/start"
mkfifo "$start_pipe"
# With avahi, the mDNS packets the start causes: counted on the lab's switch (receiving only).
mdns=()
if ((!static)); then
    ip netns exec "$lab-sw" python3 "$root/scripts/lib/mdns-count.py" br0 "$work/mdns" &
    sniffer=$!
    spawned+=("$sniffer")
    mdns=(--mdns "$work/mdns")
fi
python3 "$root/scripts/lib/mesh-bench.py" --hosts "$hosts" --start-from "$start_pipe" --seconds "$seconds" \
    --json "$json" --holders "${holders[*]}" --avahis "${avahis[*]}" ${mdns[@]+"${mdns[@]}"} &
watcher=$!
spawned+=("$watcher") # ended by the cleanup should the script stop before it does
exec 4>"$start_pipe" # opens once the watcher reads it, after its imports

for i in $(seq "$hosts"); do
    found=()
    if ((static)); then
        found=(--no-discovery)
        if ((i > 1)); then found+=(--peer "$("$root/scripts/testnet" addr "$lab" 1):47000"); fi
    fi
    level=warning log=/dev/stderr
    if [[ -n $logs ]]; then level=debug log=$logs/h$i.log; fi
    spawn_in "$i" "$bin/sessiond" --name "h$i" --session mesh-bench --port 47000 --state-dir /run/mesh-state \
        --control /run/mesh.sock --max-peers $((hosts - 1)) --log-level "$level" ${extra[@]+"${extra[@]}"} ${found[@]+"${found[@]}"} 2>>"$log"
    daemons+=("$spawned_pid")
done
last_start=$(date +%s%N)
echo "$last_start ${daemons[*]}" >&4
exec 4>&-
wait "$watcher"
