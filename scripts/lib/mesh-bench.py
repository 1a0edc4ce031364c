"""The measuring half of `scripts/bench mesh N` (scripts/lib/mesh-bench.sh starts the lab and the daemons).

Talks to each daemon's control socket through its host's mount namespace (/proc/HOLDER/root/run/mesh.sock): watches
each daemon's events until every daemon counts N-1 connected peers, reads each daemon's anonymous memory, then
measures CPU time idle and while the three bubble holders move their bubbles at 60 Hz and every other daemon sends a
move-sized unreliable message to every peer at 60 Hz. MESH_DEBUG=1 prints a timeline on stderr."""

import argparse
import base64
import json
import os
import select
import statistics
import sys
import time

from control_socket import Control

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def machine_ticks():
    """(busy, total) clock ticks of all the machine's CPUs so far, from /proc/stat."""
    fields = [int(f) for f in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


def anonymous_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    raise RuntimeError(f"no RssAnon for {pid}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, required=True)
    parser.add_argument("--start-from", required=True)
    parser.add_argument("--seconds", type=int, required=True)
    parser.add_argument("--json", type=int, required=True)
    parser.add_argument("--holders", required=True)
    parser.add_argument("--avahis", required=True)
    parser.add_argument("--mdns", help="the lines of scripts/lib/mdns-count.py, written meanwhile")
    options = parser.parse_args()
    n = options.hosts
    holders = options.holders.split()
    avahis = [int(p) for p in options.avahis.split()]
    avahi_before = sum(cpu_seconds(pid) for pid in avahis)
    # Started before the daemons: the start time and their pids come once they all run.
    with open(options.start_from) as start:
        # Open once the launcher is about to start the daemons: from here the machine's CPUs are the daemons'.
        machine_before = machine_ticks()
        fields = start.readline().split()
    options.start_ns = int(fields[0])
    daemons = [int(p) for p in fields[1:]]
    if len(daemons) != n:
        sys.exit(f"bench mesh: {len(daemons)} daemons started, not {n}")
    if os.environ.get("MESH_DEBUG"):
        print(f"{(time.time_ns() - options.start_ns) / 1e6:.0f} ms: measuring", file=sys.stderr)
    # Each pid is sessiond's once its launcher has exec'd; that is checked after the mesh (a check now would poll).

    # Each daemon's events, subscribed to as soon as its control socket is there, over a snapshot of the peers it
    # already had then; nothing waits on one daemon while another has something to say, and nothing polls, which
    # would take CPU from the daemons being measured.
    deadline = time.monotonic() + 60
    debug = bool(os.environ.get("MESH_DEBUG"))
    watches = [None] * n
    snapshots = [None] * n
    acknowledged = [False] * n
    connected = [set() for _ in range(n)]
    serving = [None] * n  # ns since the last start when host i's control socket first answered
    meshed = [None] * n
    owner = {}
    next_snapshot = time.monotonic() + 1

    def resnapshot(i):
        if snapshots[i] is not None:
            return
        snapshot = Control(f"/proc/{holders[i]}/root/run/mesh.sock", deadline)
        snapshot.send({"command": "peers"})
        snapshots[i] = snapshot
        owner[snapshot.sock] = (i, snapshot)

    while None in meshed:
        if time.monotonic() > deadline:
            missing = [f"h{i + 1}:{len(connected[i])}" for i in range(n) if meshed[i] is None]
            for i in range(n):
                if meshed[i] is None:
                    peers = Control(f"/proc/{holders[i]}/root/run/mesh.sock", deadline + 5).ask({"command": "peers"})
                    status = Control(f"/proc/{holders[i]}/root/run/mesh.sock", deadline + 5).ask({"command": "status"})
                    print(f"h{i + 1}: status says {status['peers']} peers; peers lists {len(peers)}: "
                          f"{sorted(p['name'] for p in peers)}", file=sys.stderr)
                    for p in peers:
                        if p["state"] != "connected":
                            print(f"h{i + 1}: {p['name']} ({p['peerID']}) {p['state']} at {p['endpoints']} links {p.get('links')}",
                                  file=sys.stderr)
            sys.exit(f"bench mesh: not meshed after 60 s; peers seen: {' '.join(missing)}")
        for i, holder in enumerate(holders):
            if watches[i] is not None:
                continue
            path = f"/proc/{holder}/root/run/mesh.sock"
            try:
                watch = Control(path, 0)
                snapshot = Control(path, 0)
            except OSError:
                continue
            serving[i] = time.time_ns() - options.start_ns
            watch.send({"command": "watch"})
            snapshot.send({"command": "peers"})
            watches[i], snapshots[i] = watch, snapshot
            owner[watch.sock] = (i, watch)
            owner[snapshot.sock] = (i, snapshot)
            if debug:
                print(f"{serving[i] / 1e6:.0f} ms: h{i + 1} serving", file=sys.stderr)
        # A daemon that has not counted them all yet is asked again now and then: events can be missed (a slow
        # reader's buffer), and one sent before a snapshot can arrive after it.
        if time.monotonic() >= next_snapshot:
            next_snapshot = time.monotonic() + 1
            for i in range(n):
                if meshed[i] is None and watches[i] is not None:
                    resnapshot(i)
        waiting = None in watches
        ready, _, _ = select.select(list(owner), [], [], 0.002 if waiting else 1)
        now = time.time_ns()
        for sock in ready:
            i, control = owner[sock]
            for line in control.lines():
                if control is snapshots[i]:
                    connected[i] = {p["peerID"] for p in line["result"] if p["state"] == "connected"}
                    del owner[sock]
                    sock.close()
                    snapshots[i] = None
                elif not acknowledged[i]:
                    acknowledged[i] = True
                elif line.get("event") == "peerConnected":
                    connected[i].add(line["peerID"])
                    if debug:
                        print(f"{(now - options.start_ns) / 1e6:.0f} ms: h{i + 1} connected to {line['name']} "
                              f"({len(connected[i])})", file=sys.stderr)
                elif line.get("event") in ("peerLost", "peerLeft"):
                    connected[i].discard(line["peerID"])
                elif line.get("event") == "eventsMissed":
                    resnapshot(i)
            if meshed[i] is None and len(connected[i]) == n - 1:
                meshed[i] = now - options.start_ns
    machine_after = machine_ticks()
    busy_percent = 100 * (machine_after[0] - machine_before[0]) / max(1, machine_after[1] - machine_before[1])
    for watch in watches:
        watch.sock.close()
    for i, holder in enumerate(holders):  # what the events said, checked
        peers = Control(f"/proc/{holder}/root/run/mesh.sock", deadline).ask({"command": "status"})["peers"]
        if peers != n - 1:
            sys.exit(f"bench mesh: h{i + 1} has {peers} peers after its events said {n - 1}")
    controls = [Control(f"/proc/{holder}/root/run/mesh.sock", deadline) for holder in holders]
    for pid in daemons:
        name = open(f"/proc/{pid}/comm").read().strip()
        if name != "sessiond":
            sys.exit(f"bench mesh: process {pid} is {name}, not sessiond")
    meshed_ms = [m / 1e6 for m in meshed]
    serving_ms = [s / 1e6 for s in serving]
    # CPU the daemons took from their start until all were meshed, and what the avahi-daemons took meanwhile.
    mesh_cpu = [cpu_seconds(pid) for pid in daemons]
    avahi_cpu = sum(cpu_seconds(pid) for pid in avahis) - avahi_before
    anon = [anonymous_kib(pid) for pid in daemons]

    def cpu_over(seconds, load):
        before = [cpu_seconds(pid) for pid in daemons]
        begin = time.monotonic()
        sent = 0
        if load:
            sent = load(seconds)
        else:
            time.sleep(seconds)
        elapsed = time.monotonic() - begin
        after = [cpu_seconds(pid) for pid in daemons]
        return [(a - b) / elapsed * 100 for a, b in zip(after, before)], sent

    idle_from = time.time_ns()
    idle_cpu, _ = cpu_over(options.seconds, None)
    idle_until = time.time_ns()

    # Three holders (the app has three bubbles): pick up, wait for the coordinator's grant.
    bubble_hosts = list(range(min(3, n)))
    for view, i in enumerate(bubble_hosts):
        controls[i].ask({"command": "pickup", "view": view})
    grant_deadline = time.monotonic() + 5
    for view, i in enumerate(bubble_hosts):
        me = controls[i].ask({"command": "status"})["peerID"]
        while True:
            bubbles = controls[i].ask({"command": "bubbles"})
            if bubbles[view].get("holder") == me:
                break
            if time.monotonic() > grant_deadline:
                sys.exit(f"bench mesh: h{i + 1} was not granted bubble {view}")
            time.sleep(0.01)
    payload = base64.b64encode(bytes(12)).decode()  # the size of a move's body

    def moving(seconds):
        frames = 0
        period = 1 / 60
        begin = time.monotonic()
        while frames < seconds * 60:
            target = begin + frames * period
            pause = target - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            x = float(frames % 300)
            for i, control in enumerate(controls):
                if i in bubble_hosts:
                    control.send({"command": "move", "view": bubble_hosts.index(i), "x": x, "y": x})
                else:
                    control.send({"command": "send", "channel": "unreliable", "data": payload})
            for control in controls:
                control.reply()
            frames += 1
        return frames

    load_cpu, frames = cpu_over(options.seconds, moving)
    for view, i in enumerate(bubble_hosts):
        controls[i].ask({"command": "drop", "view": view})

    rows = [
        {"metric": "mesh_connected_ms", "hosts": n, "last": max(meshed_ms), "median": statistics.median(meshed_ms),
         "first": min(meshed_ms), "last_serving": max(serving_ms),
         "after_last_serving": max(meshed_ms) - max(serving_ms)},
        {"metric": "mesh_cpu_seconds", "hosts": n, "daemons": sum(mesh_cpu), "max": max(mesh_cpu),
         "avahi_daemons": avahi_cpu, "cpus": os.cpu_count(), "machine_busy_percent": busy_percent},
        {"metric": "mesh_anon_rss_kib", "hosts": n, "max": max(anon), "median": statistics.median(anon),
         "min": min(anon)},
        {"metric": "mesh_cpu_percent", "hosts": n, "load": "idle", "seconds": options.seconds,
         "mean": statistics.mean(idle_cpu), "max": max(idle_cpu), "total": sum(idle_cpu)},
        {"metric": "mesh_cpu_percent", "hosts": n, "load": "60Hz", "seconds": options.seconds, "frames": frames,
         "datagrams_per_second": round(frames * n * (n - 1) / options.seconds), "mean": statistics.mean(load_cpu),
         "max": max(load_cpu), "total": sum(load_cpu)},
    ]
    if options.mdns:
        rows.append(mdns_row(options.mdns, n, options.start_ns, max(meshed), idle_from, idle_until))
    if options.json:
        for row in rows:
            print(json.dumps(row))
        return
    print(f"mesh of {n} test hosts, all daemons started at once")
    print(f"  every daemon sees {n - 1} connected peers: {max(meshed_ms):.0f} ms after the last start "
          f"(first {min(meshed_ms):.0f} ms, median {statistics.median(meshed_ms):.0f} ms)")
    print(f"  the last daemon served its control socket {max(serving_ms):.0f} ms after the last start: "
          f"all meshed {max(meshed_ms) - max(serving_ms):.0f} ms after that")
    print(f"  CPU until then: all daemons {sum(mesh_cpu):.2f} s (max {max(mesh_cpu):.2f} s), "
          f"all avahi-daemons {avahi_cpu:.2f} s; the machine's {os.cpu_count()} CPUs were {busy_percent:.0f}% busy "
          f"from the first start until then")
    print(f"  anonymous memory per daemon: median {statistics.median(anon) / 1024:.1f} MiB, "
          f"max {max(anon) / 1024:.1f} MiB")
    print(f"  CPU per daemon, % of a core, idle:  mean {statistics.mean(idle_cpu):.2f}  max {max(idle_cpu):.2f}  "
          f"all daemons {sum(idle_cpu):.1f}")
    print(f"  CPU per daemon, % of a core, 60 Hz: mean {statistics.mean(load_cpu):.2f}  max {max(load_cpu):.2f}  "
          f"all daemons {sum(load_cpu):.1f}  ({rows[4]['datagrams_per_second']} datagrams/s received in all)")
    if options.mdns:
        m = rows[5]
        print(f"  mDNS on the link until all were meshed: {m['packets']} packets ({m['queries']} queries, "
              f"{m['responses']} responses, {m['bytes'] / 1024:.0f} KiB), {m['packets'] / n:.0f} per host; "
              f"idle afterwards {m['idle_packets_per_second']:.1f} packets/s")


def mdns_row(path, n, start_ns, meshed_ns, idle_from, idle_until):
    """mDNS packets on the lab's switch from the last start until all were meshed, and while idle afterwards."""
    start = {"packets": 0, "queries": 0, "responses": 0, "bytes": 0}
    idle = 0
    for line in open(path):
        fields = line.split()
        if len(fields) != 3:
            continue
        at, qr, size = int(fields[0]), int(fields[1]), int(fields[2])
        if start_ns <= at <= start_ns + meshed_ns:
            start["packets"] += 1
            start["responses" if qr else "queries"] += 1
            start["bytes"] += size
        elif idle_from <= at <= idle_until:
            idle += 1
    return {"metric": "mesh_mdns", "hosts": n, **start, "until_ms": meshed_ns / 1e6,
            "idle_packets_per_second": idle / ((idle_until - idle_from) / 1e9)}


if __name__ == "__main__":
    main()
