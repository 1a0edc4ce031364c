#!/usr/bin/env bash
# Round trips between two test hosts, side by side in one run, rounds interleaved: sockperf TCP and UDP ping-pong (the
# kernel's floor), ENet reliable and unsequenced ping-pong (the peer to beat; Benchmarks/enet-pingpong), and
# session-client bench between two release sessiond (reliable, unreliable). Run by `scripts/bench net`; needs root.
#   net-bench.sh [--json] [--rounds N] [--seconds S] [--size B] [--svg FILE]
# --svg FILE also draws the rows as latency distributions in a standalone SVG (scripts/lib/latency-svg.py).
# The last row is end to end: an increment asked of host 1's daemon on its control socket until the counter event
# shows in a watch of host 2's daemon (scripts/lib/e2e-increment.py).
# Prints p50/p90/p99 in microseconds per row (the median over the rounds of each percentile) and each row's p50 ratio
# to sockperf TCP and to ENet reliable; with --json one object per line with a "metric" field.
set -euo pipefail

json=0
svg=""
rounds=3
seconds=3
size=16
die() {
    echo "bench net: $*" >&2
    exit 2
}
while (($#)); do
    case "$1" in
        --json) json=1 ;;
        --rounds)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]?$ ]] || die "--rounds needs 1...99"
            rounds=$2
            shift
            ;;
        --seconds)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]?$ ]] || die "--seconds needs 1...99"
            seconds=$2
            shift
            ;;
        --size)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ && $2 -le 1000 ]] || die "--size needs 1...1000 bytes"
            size=$2
            shift
            ;;
        --svg)
            [[ $# -ge 2 && -n $2 ]] || die "--svg needs a file"
            svg=$2
            shift
            ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done
# shellcheck source=scripts/lib/bench-lab.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lab.sh"
# shellcheck source=scripts/lib/packages.sh
source "$root/scripts/lib/packages.sh"
trap restore_policy EXIT  # until the lab's cleanup takes over
ensure_packages sockperf libenet-dev gcc python3
bench_lab_up net 2
gcc -O2 -Wall -Wextra -o "$work/enet_pingpong" Benchmarks/enet-pingpong/enet_pingpong.c -lenet
address1=$(scripts/testnet addr "$lab" 1)
address2=$(scripts/testnet addr "$lab" 2)

spawn_in 2 sockperf server --tcp -i "$address2" -p 11111 >/dev/null 2>&1
spawn_in 2 sockperf server -i "$address2" -p 11112 >/dev/null 2>&1
spawn_in 2 "$work/enet_pingpong" server 11113 >/dev/null
spawn_in 1 "$bin/sessiond" --admission open --name h1 --session net-bench --port 47000 --no-discovery --state-dir /run/net-state \
    --log-level warning
spawn_in 2 "$bin/sessiond" --admission open --name h2 --session net-bench --port 47000 --no-discovery --state-dir /run/net-state \
    --peer "$address1:47000" --log-level warning
for _ in $(seq 100); do
    if in_host 1 "$bin/session-client" --json peers 2>/dev/null | grep -q '"unreliable":"udp"'; then break; fi
    sleep 0.1
done
sleep 0.5

# Each measurement prints one line: ROW P50 P90 P99 (microseconds, round trips).
sockperf_row() {
    local row=$1
    shift
    in_host 1 sockperf ping-pong "$@" -i "$address2" -m "$size" -t "$seconds" --full-rtt 2>&1 | python3 -c '
import re, sys
text = sys.stdin.read(); row = sys.argv[1]
values = {p: float(v) for p, v in re.findall(r"percentile (\d+\.\d+) =\s+([\d.]+)", text)}
print(row, values["50.000"], values["90.000"], values["99.000"])
' "$row"
}
enet_row() {
    local row=$1 mode=$2
    in_host 1 "$work/enet_pingpong" client "$address2" 11113 $((seconds * 10000)) "$size" "$mode" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read()); print(sys.argv[1], r["p50_us"], r["p90_us"], r["p99_us"])
' "$row"
}
session_row() {
    local row=$1 channel=$2
    in_host 1 "$bin/session-client" --json bench --peer h2 --channel "$channel" --count $((seconds * 5000)) \
        --size "$size" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read()); print(sys.argv[1], r["p50_us"], r["p90_us"], r["p99_us"])
' "$row"
}

# The end-to-end path: an increment asked of host 1's daemon until host 2's watch shows it (control sockets reached
# through each host's mount namespace).
e2e_row() {
    local sockets=()
    for i in 1 2; do sockets+=("/proc/$("$root/scripts/testnet" pid "$lab" "$i")/root/run/lansession/sessiond.sock"); done
    python3 "$root/scripts/lib/e2e-increment.py" "$1" "${sockets[@]}" $((seconds * 300))
}

for round in $(seq "$rounds"); do
    echo "round $round of $rounds" >&2
    sockperf_row sockperf-tcp --tcp -p 11111
    sockperf_row sockperf-udp -p 11112
    enet_row enet-reliable reliable
    enet_row enet-unsequenced unsequenced
    session_row sessiond-reliable reliable
    session_row sessiond-unreliable unreliable
    e2e_row increment-to-watch
done >"$work/rows"

python3 - "$work/rows" "$json" "$size" "$rounds" "$work/rows.jsonl" <<'PYTHON'
import json, statistics, sys
path, as_json, size, rounds, jsonl = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4], sys.argv[5]
rows = {}
for line in open(path):
    name, p50, p90, p99 = line.split()
    rows.setdefault(name, []).append((float(p50), float(p90), float(p99)))
median = {name: [statistics.median(v[i] for v in values) for i in range(3)] for name, values in rows.items()}
tcp, enet = median["sockperf-tcp"][0], median["enet-reliable"][0]
with open(jsonl, "w") as out:
    for name, (p50, p90, p99) in median.items():
        out.write(json.dumps({"row": name, "p50": p50, "p90": p90, "p99": p99}) + "\n")
if as_json:
    for name, (p50, p90, p99) in median.items():
        print(json.dumps({"metric": "round_trip_us", "row": name, "size": int(size), "rounds": int(rounds),
                          "p50": p50, "p90": p90, "p99": p99,
                          "p50_vs_sockperf_tcp": round(p50 / tcp, 2), "p50_vs_enet_reliable": round(p50 / enet, 2)}))
else:
    print(f"round trips of {size}-byte messages between two test hosts, median of {rounds} interleaved rounds (µs)")
    print(f"{'ROW':22} {'P50':>8} {'P90':>8} {'P99':>8} {'vs TCP':>7} {'vs ENET':>8}")
    for name, (p50, p90, p99) in median.items():
        print(f"{name:22} {p50:8.1f} {p90:8.1f} {p99:8.1f} {p50 / tcp:7.2f} {p50 / enet:8.2f}")
PYTHON
if [[ -n $svg ]]; then
    python3 "$root/scripts/lib/latency-svg.py" "round trips of $size-byte messages between two test hosts" "$svg" \
        <"$work/rows.jsonl"
    echo "bench net: wrote $svg" >&2
fi
