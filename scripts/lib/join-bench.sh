#!/usr/bin/env bash
# How long a sessiond started next to a running one takes to join it: two test hosts with their own avahi-daemon, a
# release sessiond running on host 1, and on host 2 N trials of starting sessiond (discovery on) and timing until its
# status shows the peer connected, then stopping it with SIGTERM. Run by `scripts/bench join`; needs root.
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
spawn_in 1 "$bin/sessiond" --admission open --name h1 --session join-bench --port 47000 --state-dir /run/join-state --log-level warning
sleep 2  # its advertisement is established

for trial in $(seq "$trials"); do
    if ((fresh)); then in_host 2 rm -rf /run/join-state; fi
    start=$(date +%s%N)
    spawn_in 2 "$bin/sessiond" --admission open --name h2 --session join-bench --port 47000 --state-dir /run/join-state \
        --log-level warning
    daemon=$spawned_pid
    joined=""
    for _ in $(seq 500); do
        if in_host 2 "$bin/session-client" --json status 2>/dev/null | grep -q '"peers":1'; then
            joined=$(date +%s%N)
            break
        fi
        sleep 0.005
    done
    [[ -n $joined ]] || { echo "bench join: trial $trial did not join within the polls" >&2; exit 1; }
    echo "$(((joined - start) / 1000000))" >>"$work/trials"
    kill "$daemon"
    wait "$daemon" 2>/dev/null || true
    sleep 1  # host 1 has seen it leave
done

python3 - "$work/trials" "$json" "$fresh" <<'PYTHON'
import json, statistics, sys
values = sorted(int(v) for v in open(sys.argv[1]))
summary = {"metric": "join_ms", "fresh": sys.argv[3] == "1", "trials": len(values), "median": statistics.median(values), "min": values[0],
           "max": values[-1], "p90": values[int(len(values) * 0.9) - 1] if len(values) >= 10 else values[-1]}
if sys.argv[2] == "1":
    print(json.dumps(summary))
else:
    kind = "with a new peer id each time" if summary["fresh"] else "restarted with its state"
    print(f"joins of a sessiond started next to a running one, {kind} ({summary['trials']} trials, ms, status polled every ~15 ms):")
    print(f"median {summary['median']}  min {summary['min']}  p90 {summary['p90']}  max {summary['max']}")
    print("all: " + " ".join(map(str, values)))
PYTHON
