#!/usr/bin/env bash
# A file pushed between two release sessiond on test hosts, beside its anchors between the same hosts in the same run:
# the link's limit (iperf3, one TCP stream), a raw TCP copy of the same file (sendfile to a file), and what a person
# would use instead (scp, OpenSSH, with AES-128-GCM and with ChaCha20-Poly1305); and the round trip of pings while the
# file flows. Run by `scripts/bench push`; needs root; installs iperf3 and openssh-server (no service is started).
#   push-bench.sh [--json] [--megabytes N] [--rate RATE] [--secret | --insecure]
# --rate shapes host 1's link (tc tbf, e.g. 1gbit) as a real LAN would limit it. The links are sealed (Noise) with
# admission open, or with --secret a shared secret's admission (sealed the same way); --insecure does not seal them.
set -euo pipefail

megabytes=200
rate=""
secret=0
insecure=0
json=0
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
        --insecure) insecure=1 ;;
        --json) json=1 ;;
        *)
            echo "bench push: unknown argument '$1'" >&2
            exit 2
            ;;
    esac
    shift
done
# shellcheck source=scripts/lib/bench-lab.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lab.sh"
# shellcheck source=scripts/lib/packages.sh
source "$(dirname "${BASH_SOURCE[0]}")/packages.sh"
die() { echo "bench push: $*" >&2; exit 1; }
trap restore_policy EXIT # until the lab's cleanup takes over
ensure_packages iperf3 openssh-server openssh-client
bench_lab_up push 2
address1=$(scripts/testnet addr "$lab" 1)
address2=$(scripts/testnet addr "$lab" 2)
file="$work/payload.bin"
head -c "$((megabytes * 1000000))" /dev/urandom >"$file"
digest=$(sha256sum "$file" | cut -c1-64)

((secret && insecure)) && { echo "bench push: --secret or --insecure, not both" >&2; exit 2; }
extra=(--admission open)
((insecure)) && extra=(--admission open --insecure)
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

# Memory that nobody has touched yet is slow to get in a virtual machine: the first 200 MB written to a tmpfs went at
# about 0.4 GB/s here and the next at 3.4 GB/s. Whichever row came first paid for it (the raw copy did: 0.16× the
# link). So host 2's /run, where every row writes, gets that memory once before any row is timed.
in_host 2 dd if=/dev/zero of=/run/warm.bin bs=1M count="$((megabytes * 2))" status=none
in_host 2 rm /run/warm.bin

# The baseline: one TCP connection, sendfile on host 1, recv into a file in host 2's /run (where the inbox is); the
# median of 3.
raws=()
for round in 1 2 3; do
    spawn_in 2 python3 "$root/scripts/lib/raw-copy.py" receive 47100 /run/raw-copy.bin >"$work/raw$round.out"
    for _ in $(seq 100); do grep -q listening "$work/raw$round.out" 2>/dev/null && break; sleep 0.05; done
    in_host 1 python3 "$root/scripts/lib/raw-copy.py" send "$address2" 47100 "$file"
    for _ in $(seq 600); do grep -q seconds "$work/raw$round.out" && break; sleep 0.05; done
    raws+=("$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["seconds"])' \
        "$work/raw$round.out")")
done
raw=$(printf '%s\n' "${raws[@]}" | sort -g | sed -n 2p)

# The link's limit: iperf3, one TCP stream for 3 s, memory to memory.
spawn_in 2 iperf3 -s -1 -B "$address2" -p 47200 >"$work/iperf.out" 2>&1
for _ in $(seq 100); do grep -q listening "$work/iperf.out" 2>/dev/null && break; sleep 0.05; done
iperf=$(in_host 1 iperf3 -c "$address2" -p 47200 -t 3 -J \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8)')

# What a person would use: scp to an sshd in host 2 (its own keys, on host 2's address only), once per cipher; the
# time includes the SSH handshake, as it does for the person.
ssh_dir="$work/ssh"
mkdir -p "$ssh_dir"
ssh-keygen -q -t ed25519 -N "" -f "$ssh_dir/host_key"
ssh-keygen -q -t ed25519 -N "" -f "$ssh_dir/client_key"
cp "$ssh_dir/client_key.pub" "$ssh_dir/authorized_keys"
cat >"$ssh_dir/sshd_config" <<CONFIG
ListenAddress $address2:47300
HostKey $ssh_dir/host_key
AuthorizedKeysFile $ssh_dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
PidFile none
Subsystem sftp internal-sftp
CONFIG
in_host 2 mkdir -p /run/sshd
spawn_in 2 /usr/sbin/sshd -D -e -f "$ssh_dir/sshd_config" 2>"$work/sshd.err"
scp_seconds() {
    local cipher=$1 started ended
    for _ in $(seq 100); do in_host 1 bash -c "echo >/dev/tcp/$address2/47300" 2>/dev/null && break; sleep 0.05; done
    started=$(date +%s.%N)
    in_host 1 scp -q -i "$ssh_dir/client_key" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
        -o BatchMode=yes -c "$cipher" -P 47300 "$file" "root@$address2:/run/scp.bin" \
        || die "scp with $cipher failed: $(tail -3 "$work/sshd.err")"
    ended=$(date +%s.%N)
    in_host 2 rm -f /run/scp.bin
    python3 -c "print($ended - $started)"
}
scp_gcm=$(scp_seconds aes128-gcm@openssh.com)
scp_chacha=$(scp_seconds chacha20-poly1305@openssh.com)

idle=$(in_host 1 "$bin/session-client" --json bench --peer h2 --count 500)
spawn_in 1 "$bin/session-client" --json push "$file" --to h2 >"$work/push.out"
push=$spawned_pid
for _ in $(seq 200); do grep -q '"started"' "$work/push.out" 2>/dev/null && break; sleep 0.01; done
busy=$(in_host 1 "$bin/session-client" --json bench --peer h2 --count 200)
# Whether the pings were all taken while the push ran: a push that ended first leaves them partly idle.
within=1
kill -0 "$push" 2>/dev/null || within=0
wait "$push"
landed=$(in_host 2 sha256sum "/run/push-state/inbox/payload.bin" | cut -c1-64)
[[ $landed == "$digest" ]] || { echo "bench push: the file landed with another SHA-256" >&2; exit 1; }

sealing="sealed (Noise, admission open)"
((secret)) && sealing="sealed (Noise, shared-secret admission)"
((insecure)) && sealing="not sealed (--insecure)"
python3 - "$megabytes" "$raw" "$work/push.out" "$idle" "$busy" "${rate:-none}" "$sealing" "$iperf" "$scp_gcm" \
    "$scp_chacha" "$json" "$within" <<'PYTHON'
import json, sys
megabytes, raw, push_out, idle, busy, rate, sealing, iperf, scp_gcm, scp_chacha, as_json, within = sys.argv[1:]
within = within == "1"
final = json.loads(open(push_out).read().splitlines()[-1])
seconds = final["seconds"]
idle, busy = json.loads(idle), json.loads(busy)
size = int(megabytes) * 1e6
link = float(iperf)  # bytes a second
if as_json == "1":
    mbps = lambda took: round(size / took / 1e6, 1)
    print(json.dumps({"metric": "push", "megabytes": int(megabytes), "link": rate, "sealing": sealing,
                      "iperf3_mbps": round(link / 1e6, 1), "raw_copy_mbps": mbps(float(raw)),
                      "scp_aes128_gcm_mbps": mbps(float(scp_gcm)), "scp_chacha20_mbps": mbps(float(scp_chacha)),
                      "push_mbps": mbps(seconds), "push_vs_iperf3": round(size / seconds / link, 3),
                      "push_vs_scp": round(min(float(scp_gcm), float(scp_chacha)) / seconds, 2),
                      "ping_idle_p50_us": idle["p50_us"], "ping_idle_p99_us": idle["p99_us"],
                      "ping_busy_p50_us": busy["p50_us"], "ping_busy_p99_us": busy["p99_us"],
                      "ping_busy_within_push": within}))
    sys.exit(0)
print(f"{megabytes} MB host 1 -> host 2, link {rate}, sessiond's links {sealing}")
print(f"{'ROW':34} {'SECONDS':>8} {'MB/s':>8} {'vs IPERF3':>9} {'vs SCP':>7}")
best_scp = min(float(scp_gcm), float(scp_chacha))
rows = [("iperf3 (one stream, 3 s)", size / link), ("raw TCP copy (sendfile, to a file)", float(raw)),
        ("scp aes128-gcm@openssh.com", float(scp_gcm)), ("scp chacha20-poly1305@openssh.com", float(scp_chacha)),
        ("sessiond push (verified, synced)", seconds)]
for name, took in rows:
    print(f"{name:34} {took:8.3f} {size / took / 1e6:8.1f} {size / took / link:9.2f} {best_scp / took:7.2f}")
print(f"ping round trip, idle: p50 {idle['p50_us']} us, p99 {idle['p99_us']} us; during the push: "
      f"p50 {busy['p50_us']} us, p99 {busy['p99_us']} us, max {busy['max_us']} us"
      + ("" if within else " (the push ended before the pings did: use a larger --megabytes)"))
PYTHON
