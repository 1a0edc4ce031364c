#!/usr/bin/env bash
# Round trips between two test hosts, side by side in one run, rounds interleaved: sockperf TCP and UDP ping-pong (the
# kernel's floor), ENet reliable and unsequenced ping-pong (the peer to beat; Benchmarks/enet-pingpong), and
# session-client bench between two release sessiond (reliable, unreliable; and reliable between two --insecure ones,
# for what sealing costs). Run by `scripts/bench net`; needs root.
#   net-bench.sh [--json] [--rounds N] [--count N] [--size B] [--placement split|same|both] [--svg FILE]
# Every row makes the same number of round trips (--count, default 10,000), and every row's two ends are pinned the
# same way (sched_setaffinity through taskset, every thread of each end): "split" puts host 1's end on CPU 0 and host
# 2's on CPU 1, "same" puts both on CPU 0; "both" (the default) runs each round in both placements and reports both,
# since a round trip between two CPUs and one within a CPU differ more than most of what the rows compare.
# --svg FILE also draws the rows as latency distributions in a standalone SVG (scripts/lib/latency-svg.py).
# The last row is end to end: an increment asked of host 1's daemon on its control socket until the counter event
# shows in a watch of host 2's daemon (scripts/lib/e2e-increment.py), count / 10 of them.
# Prints p50/p90/p99 in microseconds per row and placement (the median over the rounds of each percentile) and each
# row's p50 ratio to sockperf TCP and to ENet reliable in the same placement; with --json one object per line with a
# "metric" field and a "placement".
set -euo pipefail

json=0
svg=""
rounds=3
count=10000
size=16
placement=both
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
        --count)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]{2,6}$ ]] || die "--count needs 100...9999999"
            count=$2
            shift
            ;;
        --placement)
            [[ $# -ge 2 && $2 =~ ^(split|same|both)$ ]] || die "--placement needs split, same or both"
            placement=$2
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
ensure_packages sockperf libenet-dev gcc python3 util-linux
placements=(split same)
[[ $placement == both ]] || placements=("$placement")
if [[ $(nproc) -lt 2 && " ${placements[*]} " == *" split "* ]]; then
    die "the split placement needs two CPUs (this machine has $(nproc)); use --placement same"
fi
bench_lab_up net 2
gcc -O2 -Wall -Wextra -o "$work/enet_pingpong" Benchmarks/enet-pingpong/enet_pingpong.c -lenet
address1=$(scripts/testnet addr "$lab" 1)
address2=$(scripts/testnet addr "$lab" 2)

# The ends that keep running, by host: pinned anew for each placement.
ends1=()
ends2=()
spawn_in 2 sockperf server --tcp -i "$address2" -p 11111 >/dev/null 2>&1
ends2+=("$spawned_pid")
spawn_in 2 sockperf server -i "$address2" -p 11112 >/dev/null 2>&1
ends2+=("$spawned_pid")
spawn_in 2 "$work/enet_pingpong" server 11113 >/dev/null
ends2+=("$spawned_pid")
spawn_in 1 "$bin/sessiond" --admission open --name h1 --session net-bench --port 47000 --no-discovery --state-dir /run/net-state \
    --log-level warning
ends1+=("$spawned_pid")
spawn_in 2 "$bin/sessiond" --admission open --name h2 --session net-bench --port 47000 --no-discovery --state-dir /run/net-state \
    --peer "$address1:47000" --log-level warning
ends2+=("$spawned_pid")
# A second pair, --insecure (nothing sealed), on their own port and control sockets: what sealing costs, in the same run.
spawn_in 1 "$bin/sessiond" --admission open --insecure --name i1 --session net-bench-insecure --port 47001 --no-discovery \
    --state-dir /run/net-insecure --control /run/net-insecure.sock --log-level warning
ends1+=("$spawned_pid")
spawn_in 2 "$bin/sessiond" --admission open --insecure --name i2 --session net-bench-insecure --port 47001 --no-discovery \
    --state-dir /run/net-insecure --control /run/net-insecure.sock --peer "$address1:47001" --log-level warning
ends2+=("$spawned_pid")
for control in /run/lansession/sessiond.sock /run/net-insecure.sock; do
    for _ in $(seq 100); do
        if in_host 1 "$bin/session-client" --control "$control" --json peers 2>/dev/null | grep -q '"unreliable":"udp"'
        then break; fi
        sleep 0.1
    done
done
sleep 0.5

# Pins every thread of host 1's running ends to CPU $1 and host 2's to CPU $2; the clients started below run on $1.
cpu1=0
pin() {
    local pid
    cpu1=$1
    for pid in "${ends1[@]}"; do taskset -a -p -c "$1" "$pid" >/dev/null; done
    for pid in "${ends2[@]}"; do taskset -a -p -c "$2" "$pid" >/dev/null; done
}

# Each measurement prints one line: ROW PLACEMENT P50 P90 P99 (microseconds, round trips).
# sockperf runs for a time, not a count: long enough for the count at 150 µs a round trip, its log of every round
# trip (--full-log) kept, and the first $count after its warm-up taken, as many as the other rows make.
sockperf_row() {
    local row=$1
    shift
    in_host 1 taskset -c "$cpu1" sockperf ping-pong "$@" -i "$address2" -m "$size" -t $((count * 150 / 1000000 + 1)) \
        --full-rtt --full-log "$work/sockperf.log" >/dev/null 2>&1
    python3 -c '
import sys
path, row, where, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
samples = []
for line in open(path):
    fields = line.split(",")
    if len(fields) == 4 and fields[0].strip().isdigit():
        samples.append(float(fields[3]))
samples = sorted(samples[:count])
if len(samples) < count:
    sys.exit(f"bench net: sockperf made {len(samples)} round trips, not {count}")
pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
print(row, where, round(pick(0.5), 3), round(pick(0.9), 3), round(pick(0.99), 3))
' "$work/sockperf.log" "$row" "$where" "$count"
}
enet_row() {
    local row=$1 mode=$2
    in_host 1 taskset -c "$cpu1" "$work/enet_pingpong" client "$address2" 11113 "$count" "$size" "$mode" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read()); print(sys.argv[1], sys.argv[2], r["p50_us"], r["p90_us"], r["p99_us"])
' "$row" "$where"
}
session_row() {
    local row=$1 channel=$2 control=${3:-/run/lansession/sessiond.sock} peer=${4:-h2}
    in_host 1 "$bin/session-client" --control "$control" --json bench --peer "$peer" --channel "$channel" \
        --count "$count" --size "$size" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read()); print(sys.argv[1], sys.argv[2], r["p50_us"], r["p90_us"], r["p99_us"])
' "$row" "$where"
}

# The end-to-end path: an increment asked of host 1's daemon until host 2's watch shows it (control sockets reached
# through each host's mount namespace).
e2e_row() {
    local sockets=()
    for i in 1 2; do sockets+=("/proc/$("$root/scripts/testnet" pid "$lab" "$i")/root/run/lansession/sessiond.sock"); done
    taskset -c "$cpu1" python3 "$root/scripts/lib/e2e-increment.py" "$1" "${sockets[@]}" $((count / 10)) | sed "s/^\([^ ]*\) /\1 $where /"
}

for round in $(seq "$rounds"); do
    for where in "${placements[@]}"; do
        echo "round $round of $rounds, $where" >&2
        if [[ $where == split ]]; then pin 0 1; else pin 0 0; fi
        sockperf_row sockperf-tcp --tcp -p 11111
        sockperf_row sockperf-udp -p 11112
        enet_row enet-reliable reliable
        enet_row enet-unsequenced unsequenced
        session_row sessiond-reliable reliable
        session_row sessiond-unreliable unreliable
        session_row sessiond-reliable-insecure reliable /run/net-insecure.sock i2
        e2e_row increment-to-watch
    done
done >"$work/rows"

python3 - "$work/rows" "$json" "$size" "$rounds" "$work/rows.jsonl" "$count" <<'PYTHON'
import json, statistics, sys
path, as_json, size, rounds, jsonl, count = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
rows = {}
for line in open(path):
    name, where, p50, p90, p99 = line.split()
    rows.setdefault((name, where), []).append((float(p50), float(p90), float(p99)))
median = {key: [statistics.median(v[i] for v in values) for i in range(3)] for key, values in rows.items()}
placements = list(dict.fromkeys(where for _, where in median))
with open(jsonl, "w") as out:
    for (name, where), (p50, p90, p99) in median.items():
        label = name if len(placements) == 1 else f"{name} ({where})"
        out.write(json.dumps({"row": label, "p50": p50, "p90": p90, "p99": p99}) + "\n")
if not as_json:
    print(f"round trips of {size}-byte messages between two test hosts, {count} per row, median of {rounds} "
          f"interleaved rounds (µs); split: host 1 on CPU 0, host 2 on CPU 1; same: both on CPU 0")
for where in placements:
    tcp, enet = median[("sockperf-tcp", where)][0], median[("enet-reliable", where)][0]
    if as_json:
        for (name, row_where), (p50, p90, p99) in median.items():
            if row_where != where:
                continue
            print(json.dumps({"metric": "round_trip_us", "row": name, "placement": where, "size": int(size),
                              "rounds": int(rounds), "count": int(count), "p50": p50, "p90": p90, "p99": p99,
                              "p50_vs_sockperf_tcp": round(p50 / tcp, 2),
                              "p50_vs_enet_reliable": round(p50 / enet, 2)}))
        continue
    print(f"\n{where}:")
    print(f"{'ROW':22} {'P50':>8} {'P90':>8} {'P99':>8} {'vs TCP':>7} {'vs ENET':>8}")
    for (name, row_where), (p50, p90, p99) in median.items():
        if row_where == where:
            print(f"{name:22} {p50:8.1f} {p90:8.1f} {p99:8.1f} {p50 / tcp:7.2f} {p50 / enet:8.2f}")
PYTHON
if [[ -n $svg ]]; then
    python3 "$root/scripts/lib/latency-svg.py" "round trips of $size-byte messages between two test hosts" "$svg" \
        <"$work/rows.jsonl"
    echo "bench net: wrote $svg" >&2
fi
