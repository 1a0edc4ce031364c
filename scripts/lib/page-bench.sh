#!/usr/bin/env bash
# What open pages cost sessiond, and what one page flooding moves does to the others. A release sessiond on
# 127.0.0.1 (no discovery, no peer) serving its page; Benchmarks/page-bench opens N pages that read (1, 20, 200 by
# default) while one more drags a bubble at 60 Hz and, but in the first row, one more floods moves as fast as its
# socket takes them. Per row: the move latency the N pages see (drag page's write to each page's read), what share of
# the moves they saw, `status` on the control socket every 20 ms, the daemon's CPU, and its RSS before the pages
# opened, at their peak and 3 s after they closed. The first row (one page, no flood) is the baseline. Run by
# `scripts/bench pages`; needs no root. The daemon runs on CPU 0 and the pages on CPU 1 (taskset), in every row.
#   page-bench.sh [--json] [--seconds S] [--pages N,N,...]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
args=()
while (($#)); do
    case "$1" in
        --json) args+=(--json) ;;
        --seconds)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]{0,2}$ ]] || { echo "bench pages: --seconds needs 1...999" >&2; exit 2; }
            args+=(--seconds "$2")
            shift
            ;;
        --pages)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]{0,2}(,[1-9][0-9]{0,2})*$ ]] || {
                echo "bench pages: --pages needs counts 1...999, comma-separated" >&2
                exit 2
            }
            args+=(--pages "$2")
            shift
            ;;
        *)
            echo "bench pages: unknown argument '$1'" >&2
            exit 2
            ;;
    esac
    shift
done

cd "$root"
swift build -c release --product sessiond >&2
swift build -c release --product session-client >&2
swift build --package-path Benchmarks -c release --product page-bench >&2
bin=$(swift build -c release --show-bin-path)
bench_bin=$(swift build --package-path Benchmarks -c release --show-bin-path)

work=$(mktemp -d)
daemon=""
cleanup() {
    if [[ -n $daemon ]]; then
        kill "$daemon" 2>/dev/null || true
        wait "$daemon" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
# Two hundred pages and the benchmark's own sockets.
ulimit -n 4096
# Every row pinned the same way, the baseline too: the daemon on CPU 0, the benchmark's pages on CPU 1 (on a
# one-CPU machine, both on CPU 0).
bench_cpu=1
[[ $(nproc) -ge 2 ]] || bench_cpu=0
taskset -c 0 "$bin/sessiond" --no-discovery --listen 127.0.0.1 --port 0 --http 127.0.0.1:0 --admission open --name page-bench \
    --state-dir "$work/state" --control "$work/sessiond.sock" --log-level warning 2>"$work/sessiond.log" &
daemon=$!
url=""
for _ in $(seq 100); do
    url=$("$bin/session-client" --control "$work/sessiond.sock" web 2>/dev/null) && break
    sleep 0.1
done
[[ -n $url ]] || { cat "$work/sessiond.log" >&2; echo "bench pages: sessiond did not start" >&2; exit 1; }
taskset -c "$bench_cpu" "$bench_bin/page-bench" --url "$url" --control "$work/sessiond.sock" --pid "$daemon" ${args[@]+"${args[@]}"}
