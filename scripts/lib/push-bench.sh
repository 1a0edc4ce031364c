#!/usr/bin/env bash
# A file pushed between two release sessiond on test hosts, beside its anchors between the same hosts in the same run:
# the link's limit (iperf3, one TCP stream), a raw TCP copy of the same file (sendfile to a file), and what a person
# would use instead (scp, OpenSSH, with AES-128-GCM and with ChaCha20-Poly1305); and the round trip of pings while the
# file flows. Each row also gives its CPU per byte: the user and system time of the sending and the receiving processes
# during the transfer, over the bytes moved. Run by `scripts/bench push`; needs root; installs iperf3 and
# openssh-server (no service is started).
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
clock_ticks=$(getconf CLK_TCK)

# CPU time (user + system, in clock ticks) that process PID has used so far, all its threads; with "children" as the
# second argument, also that of its children that ended and were waited for. The hosts share this machine's process
# IDs, so /proc here sees their processes. The command's name (field 2) may hold spaces: the fields are counted after
# its closing parenthesis, where field 3 comes first.
cpu_ticks() {
    local stat fields ticks
    stat=$(<"/proc/$1/stat")
    read -r -a fields <<<"${stat##*) }"
    ticks=$((fields[11] + fields[12]))
    if [[ ${2-} == children ]]; then ticks=$((ticks + fields[13] + fields[14])); fi
    echo "$ticks"
}
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
daemon1=$spawned_pid
spawn_in 2 "$bin/sessiond" --name h2 --session push-bench --port 47000 --no-discovery --state-dir /run/push-state \
    --peer "$address1:47000" --log-level warning ${extra[@]+"${extra[@]}"}
daemon2=$spawned_pid
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
# median of 3, of the time and (separately) of the CPU both ends report for their part of the copy.
raws=()
raw_cpus=()
for round in 1 2 3; do
    spawn_in 2 python3 "$root/scripts/lib/raw-copy.py" receive 47100 /run/raw-copy.bin >"$work/raw$round.out"
    for _ in $(seq 100); do grep -q listening "$work/raw$round.out" 2>/dev/null && break; sleep 0.05; done
    in_host 1 python3 "$root/scripts/lib/raw-copy.py" send "$address2" 47100 "$file" >"$work/raw-send$round.out"
    for _ in $(seq 600); do grep -q seconds "$work/raw$round.out" && break; sleep 0.05; done
    read -r took cpu < <(python3 -c '
import json, sys
received = json.loads(open(sys.argv[1]).read().splitlines()[-1])
sent = json.loads(open(sys.argv[2]).read().splitlines()[-1])
print(received["seconds"], received["cpu_seconds"] + sent["cpu_seconds"])' "$work/raw$round.out" "$work/raw-send$round.out")
    raws+=("$took")
    raw_cpus+=("$cpu")
done
raw=$(printf '%s\n' "${raws[@]}" | sort -g | sed -n 2p)
raw_cpu=$(printf '%s\n' "${raw_cpus[@]}" | sort -g | sed -n 2p)

# The link's limit: iperf3, one TCP stream for 3 s, memory to memory. Its CPU is its own report: each end's user and
# system time over the test as a share of one CPU, times the test's length.
spawn_in 2 iperf3 -s -1 -B "$address2" -p 47200 >"$work/iperf.out" 2>&1
for _ in $(seq 100); do grep -q listening "$work/iperf.out" 2>/dev/null && break; sleep 0.05; done
read -r iperf iperf_cpu_per_byte < <(in_host 1 iperf3 -c "$address2" -p 47200 -t 3 -J | python3 -c '
import json, sys
end = json.load(sys.stdin)["end"]
received, cpu = end["sum_received"], end["cpu_utilization_percent"]
seconds = (cpu["host_total"] + cpu["remote_total"]) / 100 * end["sum_sent"]["seconds"]
print(received["bits_per_second"] / 8, seconds * 1e9 / received["bytes"])')

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
sshd=$spawned_pid
# Prints the seconds an scp took and the CPU seconds of both its ends: on host 1, scp and the ssh it runs (a shell's
# `times` after them: its children's user and system time); on host 2, what the listening sshd gained from the
# connection's processes once it has waited for them all (each waits for its own). Both include the SSH handshake,
# as the time does.
scp_seconds() {
    local cipher=$1 started ended before after usage
    for _ in $(seq 100); do in_host 1 bash -c "echo >/dev/tcp/$address2/47300" 2>/dev/null && break; sleep 0.05; done
    # The probe above is a connection too: its sshd child must be gone before the count starts.
    for _ in $(seq 100); do [[ -z $(<"/proc/$sshd/task/$sshd/children") ]] && break; sleep 0.05; done
    before=$(cpu_ticks "$sshd" children)
    started=$(date +%s.%N)
    usage=$(in_host 1 bash -c '"$@" && times' scp scp -q -i "$ssh_dir/client_key" -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o BatchMode=yes -c "$cipher" -P 47300 "$file" "root@$address2:/run/scp.bin") \
        || die "scp with $cipher failed: $(tail -3 "$work/sshd.err")"
    ended=$(date +%s.%N)
    for _ in $(seq 200); do [[ -z $(<"/proc/$sshd/task/$sshd/children") ]] && break; sleep 0.05; done
    after=$(cpu_ticks "$sshd" children)
    in_host 2 rm -f /run/scp.bin
    # `times` prints the shell's own user and system time, then its children's, as 0m1.234s.
    python3 - "$started" "$ended" "$before" "$after" "$clock_ticks" "$usage" <<'PYTHON'
import re, sys
started, ended, before, after, ticks, usage = sys.argv[1:]
children = [int(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", usage.splitlines()[1])]
print(float(ended) - float(started), sum(children) + (int(after) - int(before)) / int(ticks))
PYTHON
}
read -r scp_gcm scp_gcm_cpu < <(scp_seconds aes128-gcm@openssh.com)
read -r scp_chacha scp_chacha_cpu < <(scp_seconds chacha20-poly1305@openssh.com)

idle=$(in_host 1 "$bin/session-client" --json bench --peer h2 --count 500)
# Both daemons' CPU from just before the push to its end (which comes once host 2 has verified and synced the file);
# the pings taken meanwhile are in it too, a small part.
sender_before=$(cpu_ticks "$daemon1")
receiver_before=$(cpu_ticks "$daemon2")
spawn_in 1 "$bin/session-client" --json push "$file" --to h2 >"$work/push.out"
push=$spawned_pid
for _ in $(seq 200); do grep -q '"started"' "$work/push.out" 2>/dev/null && break; sleep 0.01; done
busy=$(in_host 1 "$bin/session-client" --json bench --peer h2 --count 200)
# Whether the pings were all taken while the push ran: a push that ended first leaves them partly idle.
within=1
kill -0 "$push" 2>/dev/null || within=0
wait "$push"
push_sender_cpu=$(($(cpu_ticks "$daemon1") - sender_before))
push_receiver_cpu=$(($(cpu_ticks "$daemon2") - receiver_before))
landed=$(in_host 2 sha256sum "/run/push-state/inbox/payload.bin" | cut -c1-64)
[[ $landed == "$digest" ]] || { echo "bench push: the file landed with another SHA-256" >&2; exit 1; }

sealing="sealed (Noise, admission open)"
((secret)) && sealing="sealed (Noise, shared-secret admission)"
((insecure)) && sealing="not sealed (--insecure)"
python3 - "$megabytes" "$raw" "$work/push.out" "$idle" "$busy" "${rate:-none}" "$sealing" "$iperf" "$scp_gcm" \
    "$scp_chacha" "$json" "$within" "$clock_ticks" "$iperf_cpu_per_byte" "$raw_cpu" "$scp_gcm_cpu" "$scp_chacha_cpu" \
    "$push_sender_cpu" "$push_receiver_cpu" <<'PYTHON'
import json, sys
(megabytes, raw, push_out, idle, busy, rate, sealing, iperf, scp_gcm, scp_chacha, as_json, within, clock_ticks,
 iperf_cpu_per_byte, raw_cpu, scp_gcm_cpu, scp_chacha_cpu, push_sender_ticks, push_receiver_ticks) = sys.argv[1:]
within = within == "1"
final = json.loads(open(push_out).read().splitlines()[-1])
seconds = final["seconds"]
idle, busy = json.loads(idle), json.loads(busy)
size = int(megabytes) * 1e6
link = float(iperf)  # bytes a second
# CPU per byte: user and system seconds of both ends over the bytes moved, in nanoseconds a byte.
per_byte = lambda cpu_seconds: cpu_seconds * 1e9 / size
push_sender, push_receiver = (int(ticks) / int(clock_ticks) for ticks in (push_sender_ticks, push_receiver_ticks))
cpu = {"iperf3": float(iperf_cpu_per_byte), "raw_copy": per_byte(float(raw_cpu)),
       "scp_aes128_gcm": per_byte(float(scp_gcm_cpu)), "scp_chacha20": per_byte(float(scp_chacha_cpu)),
       "push": per_byte(push_sender + push_receiver)}
if as_json == "1":
    mbps = lambda took: round(size / took / 1e6, 1)
    print(json.dumps({"metric": "push", "megabytes": int(megabytes), "link": rate, "sealing": sealing,
                      "iperf3_mbps": round(link / 1e6, 1), "raw_copy_mbps": mbps(float(raw)),
                      "scp_aes128_gcm_mbps": mbps(float(scp_gcm)), "scp_chacha20_mbps": mbps(float(scp_chacha)),
                      "push_mbps": mbps(seconds), "push_vs_iperf3": round(size / seconds / link, 3),
                      "push_vs_scp": round(min(float(scp_gcm), float(scp_chacha)) / seconds, 2),
                      "ping_idle_p50_us": idle["p50_us"], "ping_idle_p99_us": idle["p99_us"],
                      "ping_busy_p50_us": busy["p50_us"], "ping_busy_p99_us": busy["p99_us"],
                      "ping_busy_within_push": within,
                      **{f"{row}_cpu_ns_per_byte": round(value, 3) for row, value in cpu.items()},
                      "push_sender_cpu_ns_per_byte": round(per_byte(push_sender), 3),
                      "push_receiver_cpu_ns_per_byte": round(per_byte(push_receiver), 3)}))
    sys.exit(0)
print(f"{megabytes} MB host 1 -> host 2, link {rate}, sessiond's links {sealing}")
print(f"{'ROW':34} {'SECONDS':>8} {'MB/s':>8} {'vs IPERF3':>9} {'vs SCP':>7} {'CPU ns/B':>9}")
best_scp = min(float(scp_gcm), float(scp_chacha))
rows = [("iperf3 (one stream, 3 s)", size / link, "iperf3"),
        ("raw TCP copy (sendfile, to a file)", float(raw), "raw_copy"),
        ("scp aes128-gcm@openssh.com", float(scp_gcm), "scp_aes128_gcm"),
        ("scp chacha20-poly1305@openssh.com", float(scp_chacha), "scp_chacha20"),
        ("sessiond push (verified, synced)", seconds, "push")]
for name, took, key in rows:
    print(f"{name:34} {took:8.3f} {size / took / 1e6:8.1f} {size / took / link:9.2f} {best_scp / took:7.2f}"
          f" {cpu[key]:9.2f}")
print(f"CPU ns/B: user + system time of both ends over the bytes moved (iperf3's own figure; sessiond: host 1 "
      f"{per_byte(push_sender):.2f}, host 2 {per_byte(push_receiver):.2f}; clock ticks of {1000 / int(clock_ticks):g} ms)")
print(f"ping round trip, idle: p50 {idle['p50_us']} us, p99 {idle['p99_us']} us; during the push: "
      f"p50 {busy['p50_us']} us, p99 {busy['p99_us']} us, max {busy['max_us']} us"
      + ("" if within else " (the push ended before the pings did: use a larger --megabytes)"))
PYTHON
