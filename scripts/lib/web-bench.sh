#!/usr/bin/env bash
# How long a drag takes to reach another device's page: two test hosts, a release sessiond on each serving its page
# (--http), and one headless Chromium in host 1 with both pages open. Over N drags of a bubble on host 1's page, from
# each pointer event (as the page sends the move) to the frame that draws it on host 2's page, on one clock (the
# machine's, as performance.timeOrigin + performance.now() in both pages); first with frames at 60 a second (what a
# person sees), then unthrottled (the pipeline without the wait for the next frame). Beside it, the daemons' own
# reliable round trip between the same hosts (session-client bench). Run by `scripts/bench web`; needs root,
# chromium, chromium-driver and Selenium (scripts/test installs them).
#   web-bench.sh [--json] [--drags N]
set -euo pipefail

json=0
drags=200
while (($#)); do
    case "$1" in
        --json) json=1 ;;
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
python3 -c 'import selenium' 2>/dev/null || { echo "bench web: Selenium is missing (pip install selenium)" >&2; exit 1; }
command -v chromedriver >/dev/null || { echo "bench web: chromium-driver is missing" >&2; exit 1; }
# shellcheck source=scripts/lib/bench-lab.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lab.sh"
bench_lab_up web 2
address2=$("$root/scripts/testnet" addr "$lab" 2)
spawn_in 1 "$bin/sessiond" --admission open --name h1 --session web-bench --port 47000 --state-dir /run/web-state \
    --http 127.0.0.1:8080 --log-level warning
spawn_in 2 "$bin/sessiond" --admission open --name h2 --session web-bench --port 47000 --state-dir /run/web-state \
    --http "$address2:8080" --log-level warning
for _ in $(seq 100); do
    if in_host 1 "$bin/session-client" --json status 2>/dev/null | grep -q '"peers":1'; then break; fi
    sleep 0.1
done
url() { in_host "$1" "$bin/session-client" web; }
one=$(url 1)
two=$(url 2)
rows=()
for frames in 60hz unthrottled; do
    flag=()
    [[ $frames == unthrottled ]] && flag=(--unthrottled)
    line=$(in_host 1 python3 "$root/Tests/Page/page_check.py" --page "$one" --page "$two" --latency-only \
        --drags "$drags" ${flag[@]+"${flag[@]}"} | grep '"event": "latency"')
    rows+=("$line")
done
daemons=$(in_host 1 "$bin/session-client" --json bench --peer h2 --count 2000)
if ((json)); then
    for row in "${rows[@]}"; do echo "$row"; done
    echo "$daemons"
    exit 0
fi
python3 - "$daemons" "${rows[@]}" <<'PYTHON'
import json, sys
daemons = json.loads(sys.argv[1])
print(f"{'from a drag on host 1 to the frame on host 2':48} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}  moves")
for text in sys.argv[2:]:
    row = json.loads(text)
    print(f"{'page to page, frames ' + row['frames']:48} {row['p50_ms']:>8} {row['p90_ms']:>8} {row['p99_ms']:>8} "
          f"{row['max_ms']:>8}  {row['matched']} of {row['moves']}")
print(f"{'sessiond reliable round trip, h1 to h2 (16 B)':48} {daemons['p50_us'] / 1000:>8.3f} "
      f"{daemons['p90_us'] / 1000:>8.3f} {daemons['p99_us'] / 1000:>8.3f} {daemons['max_us'] / 1000:>8.3f}")
PYTHON
