"""The table of `scripts/bench all`: reads the JSON lines it gathered (each tagged with its "bench") on stdin and prints
the main figures, each beside its anchor from the same run, the ratio, the goal and whether the goal is met. A figure
whose bench did not run (or failed) is left out.

  bench-table.py < rows.jsonl"""

import json
import os
import sys


def main():
    rows = [json.loads(line) for line in sys.stdin if line.strip().startswith("{")]

    def find(bench, arguments=None, **match):
        for row in rows:
            if row.get("bench") != bench or (arguments is not None and row.get("arguments") != arguments):
                continue
            if all(row.get(key) == value for key, value in match.items()):
                return row
        return None

    table = []  # (figure, value, anchor, ratio, goal, met)

    def add(figure, value, anchor="", ratio=None, goal="", met=None):
        table.append((figure, value, anchor, "" if ratio is None else f"{ratio:.2f}×", goal,
                      "" if met is None else ("yes" if met else "no")))

    # Round trips between two test hosts (scripts/bench net), in each placement of the ends (split: two CPUs; same:
    # one CPU).
    nets = [row for row in rows if row.get("bench") == "net" and row.get("metric") == "round_trip_us"]
    for where in dict.fromkeys(row.get("placement", "split") for row in nets):
        net = {row["row"]: row for row in nets if row.get("placement", "split") == where}
        if "sessiond-reliable" in net and "sockperf-tcp" in net:
            ours, tcp = net["sessiond-reliable"], net["sockperf-tcp"]
            add(f"round trip, reliable, p50 ({where})", f"{ours['p50']:.1f} µs", f"sockperf TCP {tcp['p50']:.1f} µs",
                ours["p50"] / tcp["p50"], "≤ 1.05×", ours["p50"] / tcp["p50"] <= 1.05)
            if "enet-reliable" in net:
                enet = net["enet-reliable"]
                add(f"round trip, reliable, p50 ({where})", f"{ours['p50']:.1f} µs",
                    f"ENet reliable {enet['p50']:.1f} µs", ours["p50"] / enet["p50"], "≤ 1.0×",
                    ours["p50"] / enet["p50"] <= 1.0)
            add(f"round trip, reliable, p99 ({where})", f"{ours['p99']:.1f} µs", f"sockperf TCP {tcp['p99']:.1f} µs",
                ours["p99"] / tcp["p99"], "≤ 1.1×", ours["p99"] / tcp["p99"] <= 1.1)
        if "sessiond-reliable" in net and "sessiond-reliable-insecure" in net:
            sealed, plain = net["sessiond-reliable"]["p50"], net["sessiond-reliable-insecure"]["p50"]
            add(f"round trip, reliable, p50, sealed over --insecure ({where})", f"{sealed - plain:+.1f} µs",
                f"--insecure {plain:.1f} µs", sealed / plain, "≤ +3 µs", sealed - plain <= 3)
        if "sessiond-unreliable" in net and "sockperf-udp" in net:
            ours, udp = net["sessiond-unreliable"], net["sockperf-udp"]
            add(f"round trip, unreliable, p50 ({where})", f"{ours['p50']:.1f} µs", f"sockperf UDP {udp['p50']:.1f} µs",
                ours["p50"] / udp["p50"], "≤ 1.05×", ours["p50"] / udp["p50"] <= 1.05)
        if "increment-to-watch" in net and "sessiond-reliable" in net:
            ours, anchor = net["increment-to-watch"], net["sessiond-reliable"]
            add(f"increment → another host's watch, p50 ({where})", f"{ours['p50']:.0f} µs",
                f"reliable round trip {anchor['p50']:.1f} µs", ours["p50"] / anchor["p50"], "≤ 1.5×",
                ours["p50"] / anchor["p50"] <= 1.5)

    # A file pushed between two test hosts (scripts/bench push), unsealed and sealed.
    # Sealed: at least 0.4× iperf3 and 2.5× scp with its faster cipher.
    for arguments, label, goal in (("--insecure", "unsealed", 0.7), ("", "sealed", 0.4)):
        push = find("push", arguments, metric="push")
        if not push:
            continue
        add(f"push 200 MB, {label}", f"{push['push_mbps']:.0f} MB/s", f"iperf3 {push['iperf3_mbps']:.0f} MB/s",
            push["push_vs_iperf3"], f"≥ {goal}×", push["push_vs_iperf3"] >= goal)
        scp = max(push["scp_aes128_gcm_mbps"], push["scp_chacha20_mbps"])
        ratio = push["push_mbps"] / scp
        add(f"push 200 MB, {label}", f"{push['push_mbps']:.0f} MB/s", f"scp {scp:.0f} MB/s (faster cipher)",
            ratio, "≥ 2.5×", ratio >= 2.5)
        add("  raw TCP copy (anchor check)", f"{push['raw_copy_mbps']:.0f} MB/s",
            f"iperf3 {push['iperf3_mbps']:.0f} MB/s", push["raw_copy_mbps"] / push["iperf3_mbps"])
        if "push_cpu_ns_per_byte" in push:  # rows from before the push measured its CPU have none
            cpu = push["push_cpu_ns_per_byte"]
            add(f"  CPU per byte, {label} (both ends)", f"{cpu:.2f} ns/B",
                f"iperf3 {push['iperf3_cpu_ns_per_byte']:.2f} ns/B", cpu / push["iperf3_cpu_ns_per_byte"])
            scp_cpu = min(push["scp_aes128_gcm_cpu_ns_per_byte"], push["scp_chacha20_cpu_ns_per_byte"])
            add(f"  CPU per byte, {label} (both ends)", f"{cpu:.2f} ns/B", f"scp {scp_cpu:.2f} ns/B (cheaper cipher)",
                cpu / scp_cpu)
        for quantile, limit in (("p50", 1.5), ("p99", 3)):
            busy, idle = push[f"ping_busy_{quantile}_us"], push[f"ping_idle_{quantile}_us"]
            add(f"  round trip during the push, {quantile}", f"{busy:.0f} µs", f"idle {idle:.0f} µs", busy / idle,
                f"≤ {limit}×", busy / idle <= limit)

    # Messages, increments and a resource over one link on loopback (scripts/bench throughput).
    for row in rows:
        if row.get("bench") != "throughput":
            continue
        if row.get("metric") == "messages_per_second":
            sealed = row.get("sealed", True)
            batched = row.get("batch", 1) > 1
            anchor = "SwiftNIO TLS 1.3" if row.get("baseline") == "tls13" else "SwiftNIO TCP"
            label = f"data messages of {row['size']:,} B, {'sealed' if sealed else 'unsealed'}"
            if not batched:
                label += ", one per send and per event"
            # The goals are for batches (send(contentsOf:), read in batches); one call per message is shown beside.
            goal = (1.0 if sealed else (0.7 if row["size"] <= 1024 else 0.9)) if batched else None
            add(label, f"{row['per_second']:,.0f}/s", f"{anchor} {row['raw_tcp_per_second']:,.0f}/s",
                row["ratio_to_raw"], f"≥ {goal}×" if goal else "", row["ratio_to_raw"] >= goal if goal else None)
        elif row.get("metric", "").startswith("increments_per_second"):
            sealed = "" if row["metric"] == "increments_per_second" else ", unsealed"
            add(f"counter increments{sealed}", f"{row['per_second'] / 1e6:.1f} M/s",
                f"SwiftNIO TCP {row['raw_tcp_per_second'] / 1e6:.1f} M frames/s", row["ratio_to_raw"], "≥ 10.6 M/s",
                row["per_second"] >= 10.6e6)
        elif row.get("metric") == "transfer_MBps" and row.get("name", "").startswith("session-resource"):
            raw = find("throughput", metric="transfer_MBps", name="raw-tcp-copy")
            label = "sealed" if row["name"].endswith("sealed") else "unsealed"
            add(f"resource 100 MB on loopback, {label}", f"{row['MBps']:.0f} MB/s",
                f"raw copy {raw['MBps']:.0f} MB/s" if raw else "", row["vs_raw"])

    # Joining a running session (scripts/bench join).
    for metric, label in (("join_ms", "sealed"), ("join_ms_insecure", "unsealed")):
        join = find("join", metric=metric)
        if join:
            add(f"join, {label}, median of {join['trials']}", f"{join['median']:.0f} ms")

    # The page (scripts/bench web).
    for frames in ("60 Hz", "unthrottled"):
        web = find("web", event="latency", frames=frames)
        if web:
            add(f"page drag → other host's frame ({frames}), p50", f"{web['p50_ms']} ms",
                f"arrival in the page {web['arrived_p50_ms']} ms", goal="≤ 5 ms", met=web["p50_ms"] <= 5)
            add(f"page drag → other host's frame ({frames}), p99", f"{web['p99_ms']} ms",
                f"arrival in the page {web['arrived_p99_ms']} ms", goal="≤ 20 ms", met=web["p99_ms"] <= 20)
    cpu = find("web", event="page_cpu")
    if cpu:
        for name, daemon in zip(("host 1 (dragging page)", "host 2 (page drawing)"), cpu["daemons"]):
            more = daemon["dragging_pct"] - daemon["page_idle_pct"]
            add(f"daemon CPU, drag at {cpu['rate_hz']:g} Hz, {name}", f"+{more:.2f} %",
                f"page idle {daemon['page_idle_pct']} %, none {daemon['no_page_pct']} %", goal="≤ +2 %",
                met=more <= 2)

    # Open pages (scripts/bench pages): the busiest row beside one page alone.
    alone = find("pages", event="pages", pages=1, flood=False)
    busiest = max((row for row in rows if row.get("bench") == "pages" and row.get("flood")),
                  key=lambda row: row["pages"], default=None)
    if alone and busiest:
        n = busiest["pages"]
        add(f"{n} pages open, one flooding: status p99", f"{busiest['statusP99Ms']:.1f} ms",
            f"one page alone {alone['statusP99Ms']:.1f} ms", goal="≤ 100 ms", met=busiest["statusP99Ms"] <= 100)
        add(f"{n} pages open, one flooding: their 60 Hz drag p99", f"{busiest['moveP99Ms']:.1f} ms",
            f"one page alone {alone['moveP99Ms']:.1f} ms", goal="≤ 50 ms", met=busiest["moveP99Ms"] <= 50)
        grown = busiest["rssAfterKB"] / alone["rssBeforeKB"] - 1
        add(f"daemon RSS after {n} pages closed", f"{busiest['rssAfterKB'] // 1024} MB",
            f"before any page {alone['rssBeforeKB'] // 1024} MB", ratio=busiest["rssAfterKB"] / alone["rssBeforeKB"],
            goal="within 20 %", met=grown <= 0.2)

    # Meshes of test hosts (scripts/bench mesh).
    for arguments in sorted({row["arguments"] for row in rows if row.get("bench") == "mesh"},
                            key=lambda text: int(text.split()[0])):
        hosts = int(arguments.split()[0])
        how = "static" if "--static" in arguments else "Avahi"
        meshed = find("mesh", arguments, metric="mesh_connected_ms")
        if meshed:
            goal = 3000 if hosts >= 32 else None
            add(f"mesh of {hosts} ({how}): all connected", f"{meshed['last']:.0f} ms",
                f"last daemon serving at {meshed['last_serving']:.0f} ms",
                goal="≤ 3,000 ms" if goal else "", met=meshed["last"] <= goal if goal else None)
        mdns = find("mesh", arguments, metric="mesh_mdns")
        if mdns:
            add(f"mesh of {hosts} ({how}): mDNS packets until connected", f"{mdns['packets']:,}",
                f"{mdns['queries']} queries, {mdns['responses']} responses; idle {mdns['idle_packets_per_second']:.1f}/s")
        spent = find("mesh", arguments, metric="mesh_cpu_seconds")
        if spent and spent["avahi_daemons"]:
            add(f"mesh of {hosts} ({how}): CPU to mesh", f"daemons {spent['daemons']:.1f} s",
                f"avahi-daemons {spent['avahi_daemons']:.1f} s")
        memory = find("mesh", arguments, metric="mesh_anon_rss_kib")
        if memory:
            add(f"mesh of {hosts} ({how}): anonymous memory, median", f"{memory['median'] / 1024:.1f} MiB")
        for load, goal in (("idle", 0.5), ("60Hz", 3)):
            row = find("mesh", arguments, metric="mesh_cpu_percent", load=load)
            if row:
                judged = hosts <= 3  # the goals are for a small session; bigger ones show the cost per peer
                add(f"mesh of {hosts} ({how}): CPU per daemon, {'bubbles at 60 Hz' if load == '60Hz' else 'idle'}",
                    f"{row['mean']:.2f} %", goal=f"≤ {goal} %" if judged else "",
                    met=row["mean"] <= goal if judged else None)

    headers = ("figure", "value", "anchor (same run)", "ratio", "goal", "met")
    widths = [max(len(str(line[i])) for line in [headers, *table]) for i in range(len(headers))]
    print(f"scripts/bench all on {os.cpu_count()} CPUs ({os.uname().machine}, Linux {os.uname().release})")
    for line in [headers, *table]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip())


if __name__ == "__main__":
    main()
