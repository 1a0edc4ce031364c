#!/usr/bin/env bash
# How long a drag takes to reach another device's page, and what a page costs its daemon. Two test hosts, a release
# sessiond on each serving its page (--http), headless Chromium in host 1 with both pages open. Over N drags of a
# bubble on host 1's page: from each pointer event (its timestamp) to the frame that draws the move on host 2's page,
# on one clock (performance.timeOrigin + performance.now() in both pages); with frames at 60 a second (what a person
# sees), then unthrottled (without the wait for the next frame); also to the move's arrival in page 2. Beside it, the
# daemons' own reliable round trip (session-client bench). Then each daemon's CPU with no page, a page open and idle,
# and a drag at 60 moves a second (scripts/lib/page-drag-cpu.py). Run by `scripts/bench web`; needs root; installs
# chromium, chromium-driver and Selenium if they are missing.
#   web-bench.sh [--json] [--drags N] [--cpu-seconds S] [--latency-only | --cpu-only]
set -euo pipefail

json=0
drags=200
cpu_seconds=20
only=""
while (($#)); do
    case "$1" in
        --json) json=1 ;;
        --latency-only | --cpu-only) only=${1#--} ;;
        --cpu-seconds)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]{0,2}$ ]] || { echo "bench web: --cpu-seconds needs 1...999" >&2; exit 2; }
            cpu_seconds=$2
            shift
            ;;
        --drags)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]{0,3}$ ]] || { echo "bench web: --drags needs 1...9999" >&2; exit 2; }
            drags=$2
            shift
            ;;
        *)
            echo "bench web: unknown argument '$1'" >&2
            exit 2
            ;;
    esac
    shift
done
die() { echo "bench web: $*" >&2; exit 1; }
# shellcheck source=scripts/lib/packages.sh
source "$(dirname "${BASH_SOURCE[0]}")/packages.sh"
trap restore_policy EXIT # until the lab's cleanup takes over
ensure_packages chromium chromium-driver python3
ensure_selenium
# shellcheck source=scripts/lib/bench-lab.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lab.sh"
bench_lab_up web 2
address2=$("$root/scripts/testnet" addr "$lab" 2)
spawn_in 1 "$bin/sessiond" --admission open --name h1 --session web-bench --port 47000 --state-dir /run/web-state \
    --http 127.0.0.1:8080 --log-level warning
daemon1=$spawned_pid
spawn_in 2 "$bin/sessiond" --admission open --name h2 --session web-bench --port 47000 --state-dir /run/web-state \
    --http "$address2:8080" --log-level warning
daemon2=$spawned_pid
for _ in $(seq 100); do
    if in_host 1 "$bin/session-client" --json status 2>/dev/null | grep -q '"peers":1'; then break; fi
    sleep 0.1
done
url() { in_host "$1" "$bin/session-client" web; }
one=$(url 1)
two=$(url 2)
rows=()
cpu=""
if [[ $only != latency-only ]]; then
    sleep 2 # past the join's own work
    cpu=$(in_host 1 python3 "$root/scripts/lib/page-drag-cpu.py" --url "$one" --pid "$daemon1" --also "$two" \
        --watch "$daemon2" --seconds "$cpu_seconds")
fi
frame_rows=(60hz unthrottled)
[[ $only == cpu-only ]] && frame_rows=()
for frames in ${frame_rows[@]+"${frame_rows[@]}"}; do
    flag=()
    [[ $frames == unthrottled ]] && flag=(--unthrottled)
    line=$(in_host 1 python3 "$root/Tests/Page/page_check.py" --page "$one" --page "$two" --latency-only \
        --drags "$drags" ${flag[@]+"${flag[@]}"} | grep '"event": "latency"')
    rows+=("$line")
done
daemons=$(in_host 1 "$bin/session-client" --json bench --peer h2 --count 2000)
if ((json)); then
    for row in ${rows[@]+"${rows[@]}"}; do echo "$row"; done
    [[ -z $cpu ]] || echo "$cpu"
    echo "$daemons"
    exit 0
fi
python3 - "$daemons" "$cpu" ${rows[@]+"${rows[@]}"} <<'PYTHON'
import json, sys
daemons = json.loads(sys.argv[1])
if sys.argv[3:]:
    print(f"{'from a drag on host 1 to the frame on host 2':48} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}  moves")
for text in sys.argv[3:]:
    row = json.loads(text)
    print(f"{'page to page, frames ' + row['frames']:48} {row['p50_ms']:>8} {row['p90_ms']:>8} {row['p99_ms']:>8} "
          f"{row['max_ms']:>8}  {row['matched']} of {row['moves']}")
    print(f"{'  moves after the first of a drag':48} {row['later_p50_ms']:>8} {row['later_p90_ms']:>8} "
          f"{row['later_p99_ms']:>8} {'':>8}  (a drag's first move also picks it up)")
    print(f"{'  to its arrival in page 2, before the frame':48} {row['arrived_p50_ms']:>8} {row['arrived_p90_ms']:>8} "
          f"{row['arrived_p99_ms']:>8} {row['arrived_max_ms']:>8}")
    print(f"{'  the browser: pointer event to its handler':48} {row['input_lag_p50_ms']:>8} "
          f"{row['input_lag_p90_ms']:>8} {row['input_lag_p99_ms']:>8}")
print(f"{'sessiond reliable round trip, h1 to h2 (16 B)':48} {daemons['p50_us'] / 1000:>8.3f} "
      f"{daemons['p90_us'] / 1000:>8.3f} {daemons['p99_us'] / 1000:>8.3f} {daemons['max_us'] / 1000:>8.3f}")
if sys.argv[2]:
    cpu = json.loads(sys.argv[2])
    print()
    print(f"{'daemon CPU, % of one CPU, ' + str(int(cpu['seconds'])) + ' s each':48} {'no page':>8} {'page':>8} "
          f"{'drag':>8} {'more':>8}  ({cpu['moves']} moves at {cpu['rate_hz']:g} Hz)")
    for name, d in zip(("h1, serving the page that drags", "h2, its page drawing the drag"), cpu["daemons"]):
        print(f"{name:48} {d['no_page_pct']:>8} {d['page_idle_pct']:>8} {d['dragging_pct']:>8} "
              f"{round(d['dragging_pct'] - d['page_idle_pct'], 2):>8}")
PYTHON
