#!/usr/bin/env bash
# A file pushed between two release sessiond on test hosts, next to a raw TCP copy of the same file between the same
# hosts, in the same run; and the round trip of pings while the file flows. Run by `scripts/bench push`; needs root.
#   push-bench.sh [--megabytes N] [--rate RATE] [--secret]
# --rate shapes host 1's link (tc tbf, e.g. 1gbit) as a real LAN would limit it; --secret seals the links.
set -euo pipefail

megabytes=200
rate=""
secret=0
while (($#)); do
    case "$1" in
        --megabytes)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || { echo "bench push: --megabytes needs a whole number" >&2; exit 2; }
            megabytes=$2
            shift
            ;;
        --rate)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*[kmg]?bit$ ]] || { echo "bench push: --rate needs a rate like 1gbit" >&2; exit 2; }
            rate=$2
            shift
            ;;
        --secret) secret=1 ;;
        *)
            echo "bench push: unknown argument '$1'" >&2
            exit 2
            ;;
    esac
    shift
done
# shellcheck source=scripts/lib/bench-lab.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lab.sh"
bench_lab_up push 2
address1=$(scripts/testnet addr "$lab" 1)
address2=$(scripts/testnet addr "$lab" 2)
file="$work/payload.bin"
head -c "$((megabytes * 1000000))" /dev/urandom >"$file"
digest=$(sha256sum "$file" | cut -c1-64)

extra=(--admission open)
if ((secret)); then
    head -c 32 /dev/urandom | base64 >"$work/secret"
    chmod 600 "$work/secret"
    extra=(--secret-file "$work/secret")
fi
spawn_in 1 "$bin/sessiond" --name h1 --session push-bench --port 47000 --no-discovery --state-dir /run/push-state \
    --log-level warning ${extra[@]+"${extra[@]}"}
spawn_in 2 "$bin/sessiond" --name h2 --session push-bench --port 47000 --no-discovery --state-dir /run/push-state \
    --peer "$address1:47000" --log-level warning ${extra[@]+"${extra[@]}"}
for _ in $(seq 100); do
    if in_host 1 "$bin/session-client" --json status 2>/dev/null | grep -q '"peers":1'; then break; fi
    sleep 0.1
done
if [[ -n $rate ]]; then
    in_host 1 tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 20ms
fi

# The baseline: one TCP connection, sendfile on host 1, recv into a file in host 2's /run (where the inbox is).
spawn_in 2 python3 "$root/scripts/lib/raw-copy.py" receive 47100 /run/raw-copy.bin >"$work/raw.out"
for _ in $(seq 100); do grep -q listening "$work/raw.out" 2>/dev/null && break; sleep 0.05; done
in_host 1 python3 "$root/scripts/lib/raw-copy.py" send "$address2" 47100 "$file"
for _ in $(seq 600); do grep -q seconds "$work/raw.out" && break; sleep 0.05; done
raw=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["seconds"])' "$work/raw.out")

idle=$(in_host 1 "$bin/session-client" --json bench --peer h2 --count 500)
spawn_in 1 "$bin/session-client" --json push "$file" --to h2 >"$work/push.out"
push=$spawned_pid
for _ in $(seq 200); do grep -q '"started"' "$work/push.out" 2>/dev/null && break; sleep 0.01; done
busy=$(in_host 1 "$bin/session-client" --json bench --peer h2 --count 200)
wait "$push"
landed=$(in_host 2 sha256sum "/run/push-state/inbox/payload.bin" | cut -c1-64)
[[ $landed == "$digest" ]] || { echo "bench push: the file landed with another SHA-256" >&2; exit 1; }

python3 - "$megabytes" "$raw" "$work/push.out" "$idle" "$busy" "${rate:-none}" "$secret" <<'PYTHON'
import json, sys
megabytes, raw, push_out, idle, busy, rate, secret = sys.argv[1:]
final = json.loads(open(push_out).read().splitlines()[-1])
seconds = final["seconds"]
idle, busy = json.loads(idle), json.loads(busy)
size = int(megabytes) * 1e6
raw = float(raw)
print(f"{megabytes} MB host 1 -> host 2, link {rate}, {'sealed' if secret == '1' else 'not sealed'}")
print(f"{'ROW':28} {'SECONDS':>8} {'MB/s':>8} {'vs RAW':>7}")
print(f"{'raw-tcp-copy':28} {raw:8.3f} {size / raw / 1e6:8.1f} {1:7.2f}")
print(f"{'sessiond-push':28} {seconds:8.3f} {size / seconds / 1e6:8.1f} {raw / seconds:7.2f}")
print(f"ping round trip, idle: p50 {idle['p50_us']} us, p99 {idle['p99_us']} us; during the push: "
      f"p50 {busy['p50_us']} us, p99 {busy['p99_us']} us, max {busy['max_us']} us")
PYTHON
