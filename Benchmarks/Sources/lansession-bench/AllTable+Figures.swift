import Foundation

extension AllTable {
    /// A file pushed between two test hosts, unsealed and sealed: at least 0.7× (0.4× sealed) iperf3 and 2.5× scp
    /// with its faster cipher.
    mutating func addPush() {
        for (arguments, label, goal) in [("--insecure", "unsealed", 0.7), ("", "sealed", 0.4)] {
            guard let push = find("push", arguments, ["metric": "push"]) else { continue }
            let mbps = Self.number(push, "push_mbps")
            let iperf = Self.number(push, "iperf3_mbps")
            add(
                "push 200 MB, \(label)", "\(Self.fixed(mbps, 0)) MB/s", "iperf3 \(Self.fixed(iperf, 0)) MB/s",
                ratio: Self.number(push, "push_vs_iperf3"), goal: "≥ \(goal)×",
                met: Self.number(push, "push_vs_iperf3") >= goal)
            let scp = max(Self.number(push, "scp_aes128_gcm_mbps"), Self.number(push, "scp_chacha20_mbps"))
            add(
                "push 200 MB, \(label)", "\(Self.fixed(mbps, 0)) MB/s",
                "scp \(Self.fixed(scp, 0)) MB/s (faster cipher)",
                ratio: mbps / scp, goal: "≥ 2.5×", met: mbps / scp >= 2.5)
            let raw = Self.number(push, "raw_copy_mbps")
            add(
                "  raw TCP copy (anchor check)", "\(Self.fixed(raw, 0)) MB/s", "iperf3 \(Self.fixed(iperf, 0)) MB/s",
                ratio: raw / iperf)
            if push["push_cpu_ns_per_byte"] != nil {
                let cpu = Self.number(push, "push_cpu_ns_per_byte")
                let iperfCPU = Self.number(push, "iperf3_cpu_ns_per_byte")
                add(
                    "  CPU per byte, \(label) (both ends)", "\(Self.fixed(cpu, 2)) ns/B",
                    "iperf3 \(Self.fixed(iperfCPU, 2)) ns/B", ratio: cpu / iperfCPU)
                let scpCPU = min(
                    Self.number(push, "scp_aes128_gcm_cpu_ns_per_byte"),
                    Self.number(push, "scp_chacha20_cpu_ns_per_byte"))
                add(
                    "  CPU per byte, \(label) (both ends)", "\(Self.fixed(cpu, 2)) ns/B",
                    "scp \(Self.fixed(scpCPU, 2)) ns/B (cheaper cipher)", ratio: cpu / scpCPU)
            }
            for (quantile, limit, shown) in [("p50", 1.5, "1.5"), ("p99", 3.0, "3")] {
                let busy = Self.number(push, "ping_busy_\(quantile)_us")
                let idle = Self.number(push, "ping_idle_\(quantile)_us")
                add(
                    "  round trip during the push, \(quantile)", "\(Self.fixed(busy, 0)) µs",
                    "idle \(Self.fixed(idle, 0)) µs",
                    ratio: busy / idle, goal: "≤ \(shown)×", met: busy / idle <= limit)
            }
        }
    }

    /// Messages, increments and a resource over one link on loopback.
    mutating func addThroughput() {
        for row in rows where row["bench"] as? String == "throughput" {
            let metric = row["metric"] as? String ?? ""
            if metric == "messages_per_second", row["baseline"] as? String == "reliable" {
                // Durable messages: on the disk before the send returns, beside the same messages reliable.
                let tmpfs = (row["what"] as? String ?? "").contains("/dev/shm")
                let perSecond = Self.number(row, "per_second")
                let goal = tmpfs ? 50_000.0 : 5_000
                add(
                    "durable messages of 1,024 B, log on \(tmpfs ? "tmpfs" : "a disk (fsync)")",
                    "\(Self.grouped(perSecond))/s",
                    "reliable \(Self.grouped(Self.number(row, "raw_tcp_per_second")))/s",
                    ratio: Self.number(row, "ratio_to_raw"), goal: "≥ \(Self.grouped(goal))/s", met: perSecond >= goal)
            } else if metric == "messages_per_second" {
                let sealed = row["sealed"].flatMap(Self.numeric).map { $0 != 0 } ?? true
                let batched = (row["batch"].flatMap(Self.numeric) ?? 1) > 1
                let anchor = row["baseline"] as? String == "tls13" ? "SwiftNIO TLS 1.3" : "SwiftNIO TCP"
                let size = Self.number(row, "size")
                var label = "data messages of \(Self.grouped(size)) B, \(sealed ? "sealed" : "unsealed")"
                if !batched { label += ", one per send and per event" }
                // The goals are for batches (send(contentsOf:), read in batches); one call per message is shown beside.
                let goal: Double? = batched ? (sealed ? 1.0 : (size <= 1024 ? 0.7 : 0.9)) : nil
                let ratio = Self.number(row, "ratio_to_raw")
                add(
                    label, "\(Self.grouped(Self.number(row, "per_second")))/s",
                    "\(anchor) \(Self.grouped(Self.number(row, "raw_tcp_per_second")))/s", ratio: ratio,
                    goal: goal.map { "≥ \($0)×" } ?? "", met: goal.map { ratio >= $0 })
            } else if metric.hasPrefix("increments_per_second") {
                let sealed = metric == "increments_per_second" ? "" : ", unsealed"
                let perSecond = Self.number(row, "per_second")
                add(
                    "counter increments\(sealed)", "\(Self.fixed(perSecond / 1e6, 1)) M/s",
                    "SwiftNIO TCP \(Self.fixed(Self.number(row, "raw_tcp_per_second") / 1e6, 1)) M frames/s",
                    ratio: Self.number(row, "ratio_to_raw"), goal: "≥ 10.6 M/s", met: perSecond >= 10.6e6)
            } else if metric == "transfer_MBps", let name = row["name"] as? String, name.hasPrefix("session-resource") {
                let raw = find("throughput", nil, ["metric": "transfer_MBps", "name": "raw-tcp-copy"])
                add(
                    "resource 100 MB on loopback, \(name.hasSuffix("sealed") ? "sealed" : "unsealed")",
                    "\(Self.fixed(Self.number(row, "MBps"), 0)) MB/s",
                    raw.map { "raw copy \(Self.fixed(Self.number($0, "MBps"), 0)) MB/s" } ?? "",
                    ratio: Self.number(row, "vs_raw"))
            }
        }
    }

    /// Joining a running session; open pages (the busiest row beside one page alone).
    mutating func addJoinAndPages() {
        for (metric, label) in [("join_ms", "sealed"), ("join_ms_insecure", "unsealed")] {
            if let join = find("join", nil, ["metric": metric]) {
                add(
                    "join, \(label), median of \(Self.plain(join, "trials"))",
                    "\(Self.fixed(Self.number(join, "median"), 0)) ms")
            }
        }
        let alone = find("pages", nil, ["event": "pages", "pages": 1, "flood": 0])
        let busiest = rows.filter { $0["bench"] as? String == "pages" && Self.number($0, "flood") == 1 }
            .max { Self.number($0, "pages") < Self.number($1, "pages") }
        if let alone, let busiest {
            let pages = Self.plain(busiest, "pages")
            let status = Self.number(busiest, "statusP99Ms")
            add(
                "\(pages) pages open, one flooding: status p99", "\(Self.fixed(status, 1)) ms",
                "one page alone \(Self.fixed(Self.number(alone, "statusP99Ms"), 1)) ms", goal: "≤ 100 ms",
                met: status <= 100)
            let move = Self.number(busiest, "moveP99Ms")
            add(
                "\(pages) pages open, one flooding: their 60 Hz drag p99", "\(Self.fixed(move, 1)) ms",
                "one page alone \(Self.fixed(Self.number(alone, "moveP99Ms"), 1)) ms", goal: "≤ 50 ms", met: move <= 50)
            let after = Self.number(busiest, "rssAfterKB")
            let before = Self.number(alone, "rssBeforeKB")
            add(
                "daemon RSS after \(pages) pages closed", "\(Int(after) / 1024) MB",
                "before any page \(Int(before) / 1024) MB",
                ratio: after / before, goal: "within 20 %", met: after / before - 1 <= 0.2)
        }
    }

    /// The page: a drag to another host's frame, and the daemons' CPU.
    mutating func addWeb() {
        for frames in ["60 Hz", "unthrottled"] {
            guard let web = find("web", nil, ["event": "latency", "frames": frames]) else { continue }
            add(
                "page drag → other host's frame (\(frames)), p50", "\(Self.plain(web, "p50_ms")) ms",
                "arrival in the page \(Self.plain(web, "arrived_p50_ms")) ms", goal: "≤ 5 ms",
                met: Self.number(web, "p50_ms") <= 5)
            add(
                "page drag → other host's frame (\(frames)), p99", "\(Self.plain(web, "p99_ms")) ms",
                "arrival in the page \(Self.plain(web, "arrived_p99_ms")) ms", goal: "≤ 20 ms",
                met: Self.number(web, "p99_ms") <= 20)
        }
        guard let cpu = find("web", nil, ["event": "page_cpu"]), let daemons = cpu["daemons"] as? [Row] else { return }
        for (name, daemon) in zip(["host 1 (dragging page)", "host 2 (page drawing)"], daemons) {
            let more = Self.number(daemon, "dragging_pct") - Self.number(daemon, "page_idle_pct")
            add(
                "daemon CPU, drag at \(String(format: "%g", Self.number(cpu, "rate_hz"))) Hz, \(name)",
                "+\(Self.fixed(more, 2)) %",
                "page idle \(Self.plain(daemon, "page_idle_pct")) %, none \(Self.plain(daemon, "no_page_pct")) %",
                goal: "≤ +2 %", met: more <= 2)
        }
    }
}
