#!/usr/bin/env bash
# How long a sessiond started next to a running one takes to join it: two test hosts with their own avahi-daemon, a
# release sessiond running on host 1, and on host 2 N trials of starting sessiond (discovery on) and timing until its
# status shows the peer connected, then stopping it with SIGTERM; first with encrypted links (as every daemon runs),
# then with --insecure ones (the baseline of what the Noise handshake costs). Run by `scripts/bench join`; needs root.
#   join-bench.sh [--json] [--trials N] [--fresh]
# --fresh removes host 2's state before each start: a new peer id each time, as a new machine would have.
set -euo pipefail

json=0
trials=20
fresh=0
while (($#)); do
    case "$1" in
        --json) json=1 ;;
        --fresh) fresh=1 ;;
        --trials)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]?$ ]] || { echo "bench join: --trials needs 1...99" >&2; exit 2; }
            trials=$2
            shift
            ;;
        *)
            echo "bench join: unknown argument '$1'" >&2
            exit 2
            ;;
    esac
    shift
done
# shellcheck source=scripts/lib/bench-lab.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lab.sh"
bench_lab_up join 2
# Both kinds of links in one run: encrypted (the Noise handshake, as every daemon runs), then --insecure (the
# baseline of what encryption costs); host 1 restarts between them.
for mode in sealed insecure; do
    extra=()
    [[ $mode == insecure ]] && extra=(--insecure)
    spawn_in 1 "$bin/sessiond" --admission open --name h1 --session join-bench --port 47000 --state-dir /run/join-state \
        --log-level warning ${extra[@]+"${extra[@]}"}
    host1=$spawned_pid
    sleep 2  # its advertisement is established
    for trial in $(seq "$trials"); do
        if ((fresh)); then in_host 2 rm -rf /run/join-state; fi
        start=$(date +%s%N)
        spawn_in 2 "$bin/sessiond" --admission open --name h2 --session join-bench --port 47000 \
            --state-dir /run/join-state --log-level warning ${extra[@]+"${extra[@]}"}
        daemon=$spawned_pid
        joined=""
        for _ in $(seq 500); do
            if in_host 2 "$bin/session-client" --json status 2>/dev/null | grep -q '"peers":1'; then
                joined=$(date +%s%N)
                break
            fi
            sleep 0.005
        done
        [[ -n $joined ]] || { echo "bench join: $mode trial $trial did not join within the polls" >&2; exit 1; }
        echo "$mode $(((joined - start) / 1000000))" >>"$work/trials"
        kill "$daemon"
        wait "$daemon" 2>/dev/null || true
        sleep 1  # host 1 has seen it leave
    done
    kill "$host1"
    wait "$host1" 2>/dev/null || true
done

python3 - "$work/trials" "$json" "$fresh" <<'PYTHON'
import json, statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
kind = "with a new peer id each time" if sys.argv[3] == "1" else "restarted with its state"
if sys.argv[2] != "1":
    print(f"joins of a sessiond started next to a running one, {kind} (ms, status polled every ~15 ms):")
for mode in ("sealed", "insecure"):
    values = sorted(int(v) for m, v in rows if m == mode)
    summary = {"metric": "join_ms" if mode == "sealed" else "join_ms_insecure", "fresh": sys.argv[3] == "1",
               "trials": len(values), "median": statistics.median(values), "min": values[0], "max": values[-1],
               "p90": values[int(len(values) * 0.9) - 1] if len(values) >= 10 else values[-1]}
    if sys.argv[2] == "1":
        print(json.dumps(summary))
    else:
        print(f"{mode:9s} ({summary['trials']} trials): median {summary['median']}  min {summary['min']}  "
              f"p90 {summary['p90']}  max {summary['max']}  all: " + " ".join(map(str, values)))
PYTHON
