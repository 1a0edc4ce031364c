#!/usr/bin/env bash
# Every figure of the benchmarks in one run, each beside its anchor: round trips (sockperf, ENet), the control path, a
# pushed file (iperf3, a raw copy, scp; unsealed and sealed), messages and increments (plain SwiftNIO TCP), the page
# (latency and CPU), a join, and meshes of 3 and 32 test hosts with Avahi and of 64 with --static. One JSON object a
# line, each with the "bench" that made it; without --json, a table of the main figures at the end. Run by
# `scripts/bench all`; needs root (test hosts). Takes about 15 minutes.
#   all-bench.sh [--json]
set -euo pipefail

json=0
while (($#)); do
    case "$1" in
        --json) json=1 ;;
        *)
            echo "bench all: unknown argument '$1'" >&2
            exit 2
            ;;
    esac
    shift
done
[[ $(id -u) -eq 0 ]] || { echo "bench all: needs root (test hosts)" >&2; exit 1; }
bench="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bench"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

failed=()

# Runs `scripts/bench NAME ARGS… --json` and keeps its JSON lines, each marked with NAME and the arguments; a bench
# that fails is named at the end, and the others still run.
run() {
    local name=$1
    shift
    echo "bench all: $name $*" >&2
    "$bench" "$name" "$@" --json | python3 -c '
import json, sys
name, arguments = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        row = json.loads(line)
        print(json.dumps({"bench": name, "arguments": arguments, **row}), flush=True)
' "$name" "$*" >>"$out" || failed+=("$name $*")
}

run net --rounds 3 --count 10000
run push --insecure
run push
# The pushes leave hundreds of MB of written files in the page cache: they reach the disk now, not while the loopback
# figures after them run on the same two CPUs.
sync
run throughput
run join --trials 5
run web --drags 50 --cpu-seconds 20
run pages
run mesh 3
run mesh 32
run mesh 64 --static

if ((json)); then
    cat "$out"
else
    python3 "$(dirname "${BASH_SOURCE[0]}")/bench-table.py" <"$out"
fi
if ((${#failed[@]})); then
    printf 'bench all: failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
