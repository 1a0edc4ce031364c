import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The table of `all`: the main figures of the rows it gathered (each marked with its "bench"), each beside its anchor
/// from the same run, the ratio, the goal and whether the goal is met. A figure whose bench did not run (or failed) is
/// left out.
struct AllTable {
    typealias Row = [String: Any]

    let rows: [Row]
    var table: [[String]] = []

    init(lines: [String]) {
        rows = lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? Row
        }
        addNet()
        addPush()
        addThroughput()
        addJoinAndPages()
        addWeb()
        addMeshes()
    }

    /// The first row of `bench` (with these arguments, when given) whose values match `match`.
    func find(_ bench: String, _ arguments: String? = nil, _ match: [String: Any] = [:]) -> Row? {
        rows.first { row in
            row["bench"] as? String == bench && (arguments == nil || row["arguments"] as? String == arguments)
                && match.allSatisfy { key, value in row[key].map { Self.same($0, value) } ?? false }
        }
    }

    mutating func add(
        _ figure: String, _ value: String, _ anchor: String = "", ratio: Double? = nil, goal: String = "",
        met: Bool? = nil
    ) {
        table.append([
            figure, value, anchor, ratio.map { Self.fixed($0, 2) + "×" } ?? "", goal,
            met.map { $0 ? "yes" : "no" } ?? "",
        ])
    }

    /// Equal as Python compares JSON values: numbers and booleans by value (`False == 0`), strings as they are.
    static func same(_ found: Any, _ wanted: Any) -> Bool {
        if let found = found as? String, let wanted = wanted as? String { return found == wanted }
        guard let found = numeric(found), let wanted = numeric(wanted) else { return false }
        return found == wanted
    }

    static func numeric(_ value: Any) -> Double? {
        switch value {
        case let number as NSNumber: number.doubleValue
        case let number as Int: Double(number)
        case let number as Double: number
        case let flag as Bool: flag ? 1 : 0
        default: nil
        }
    }

    // MARK: Formatting, as Python's format specifications.

    static func number(_ row: Row?, _ key: String) -> Double { row?[key].flatMap(numeric) ?? .nan }

    /// `{value:.Nf}`.
    static func fixed(_ value: Double, _ places: Int) -> String { String(format: "%.\(places)f", value) }

    /// `{value:+.Nf}`.
    static func signed(_ value: Double, _ places: Int) -> String { String(format: "%+.\(places)f", value) }

    /// `{value:,.Nf}`: thousands separated by commas.
    static func grouped(_ value: Double, _ places: Int = 0) -> String {
        let text = fixed(value, places)
        let negative = text.hasPrefix("-")
        let digits = negative ? String(text.dropFirst()) : text
        let parts = digits.split(separator: ".", maxSplits: 1)
        var whole = String(parts[0])
        var groups: [String] = []
        while whole.count > 3 {
            groups.insert(String(whole.suffix(3)), at: 0)
            whole.removeLast(3)
        }
        groups.insert(whole, at: 0)
        let fraction = parts.count > 1 ? "." + parts[1] : ""
        return (negative ? "-" : "") + groups.joined(separator: ",") + fraction
    }

    /// `{value}` of a JSON value: as Python prints it, near enough.
    static func plain(_ row: Row?, _ key: String) -> String {
        guard let value = row?[key] else { return "None" }
        return "\(value)"
    }

    // MARK: The figures, by benchmark.

    /// Round trips between two test hosts, in each placement of the ends.
    private mutating func addNet() {
        let nets = rows.filter { $0["bench"] as? String == "net" && $0["metric"] as? String == "round_trip_us" }
        var placements: [String] = []
        for row in nets {
            let placement = row["placement"] as? String ?? "split"
            if !placements.contains(placement) { placements.append(placement) }
        }
        for place in placements {
            var net: [String: Row] = [:]
            for row in nets where (row["placement"] as? String ?? "split") == place {
                if let name = row["row"] as? String { net[name] = row }
            }
            let p50 = { (name: String) in Self.number(net[name], "p50") }
            if net["sessiond-reliable"] != nil, net["sockperf-tcp"] != nil {
                let ours = p50("sessiond-reliable")
                let tcp = p50("sockperf-tcp")
                add(
                    "round trip, reliable, p50 (\(place))", "\(Self.fixed(ours, 1)) µs",
                    "sockperf TCP \(Self.fixed(tcp, 1)) µs", ratio: ours / tcp, goal: "≤ 1.05×", met: ours / tcp <= 1.05
                )
                if net["enet-reliable"] != nil {
                    let enet = p50("enet-reliable")
                    add(
                        "round trip, reliable, p50 (\(place))", "\(Self.fixed(ours, 1)) µs",
                        "ENet reliable \(Self.fixed(enet, 1)) µs", ratio: ours / enet, goal: "≤ 1.0×",
                        met: ours / enet <= 1.0)
                }
                let ours99 = Self.number(net["sessiond-reliable"], "p99")
                let tcp99 = Self.number(net["sockperf-tcp"], "p99")
                add(
                    "round trip, reliable, p99 (\(place))", "\(Self.fixed(ours99, 1)) µs",
                    "sockperf TCP \(Self.fixed(tcp99, 1)) µs", ratio: ours99 / tcp99, goal: "≤ 1.1×",
                    met: ours99 / tcp99 <= 1.1)
            }
            if net["sessiond-reliable"] != nil, net["sessiond-reliable-insecure"] != nil {
                let sealed = p50("sessiond-reliable")
                let plain = p50("sessiond-reliable-insecure")
                add(
                    "round trip, reliable, p50, sealed over --insecure (\(place))",
                    "\(Self.signed(sealed - plain, 1)) µs",
                    "--insecure \(Self.fixed(plain, 1)) µs", ratio: sealed / plain, goal: "≤ +3 µs",
                    met: sealed - plain <= 3)
            }
            if net["sessiond-unreliable"] != nil, net["sockperf-udp"] != nil {
                let ours = p50("sessiond-unreliable")
                let udp = p50("sockperf-udp")
                add(
                    "round trip, unreliable, p50 (\(place))", "\(Self.fixed(ours, 1)) µs",
                    "sockperf UDP \(Self.fixed(udp, 1)) µs", ratio: ours / udp, goal: "≤ 1.05×", met: ours / udp <= 1.05
                )
            }
            if net["increment-to-watch"] != nil, net["sessiond-reliable"] != nil {
                let ours = p50("increment-to-watch")
                let anchor = p50("sessiond-reliable")
                add(
                    "increment → another host's watch, p50 (\(place))", "\(Self.fixed(ours, 0)) µs",
                    "reliable round trip \(Self.fixed(anchor, 1)) µs", ratio: ours / anchor, goal: "≤ 1.5×",
                    met: ours / anchor <= 1.5)
            }
        }
    }

    /// Meshes of test hosts, by their arguments (hosts first).
    private mutating func addMeshes() {
        var runs: [String] = []
        for row in rows where row["bench"] as? String == "mesh" {
            if let arguments = row["arguments"] as? String, !runs.contains(arguments) { runs.append(arguments) }
        }
        let hostsOf = { (arguments: String) in Int(arguments.split(separator: " ").first ?? "") ?? 0 }
        for arguments in runs.sorted(by: { hostsOf($0) < hostsOf($1) }) {
            let hosts = hostsOf(arguments)
            let how = arguments.contains("--static") ? "static" : "Avahi"
            if let meshed = find("mesh", arguments, ["metric": "mesh_connected_ms"]) {
                let last = Self.number(meshed, "last")
                let goal: Double? = hosts >= 32 ? 3000 : nil
                add(
                    "mesh of \(hosts) (\(how)): all connected", "\(Self.fixed(last, 0)) ms",
                    "last daemon serving at \(Self.fixed(Self.number(meshed, "last_serving"), 0)) ms",
                    goal: goal == nil ? "" : "≤ 3,000 ms", met: goal.map { last <= $0 })
            }
            if let mdns = find("mesh", arguments, ["metric": "mesh_mdns"]) {
                add(
                    "mesh of \(hosts) (\(how)): mDNS packets until connected",
                    Self.grouped(Self.number(mdns, "packets")),
                    "\(Self.plain(mdns, "queries")) queries, \(Self.plain(mdns, "responses")) responses; idle "
                        + "\(Self.fixed(Self.number(mdns, "idle_packets_per_second"), 1))/s")
            }
            if let spent = find("mesh", arguments, ["metric": "mesh_cpu_seconds"]),
                Self.number(spent, "avahi_daemons") > 0
            {
                add(
                    "mesh of \(hosts) (\(how)): CPU to mesh",
                    "daemons \(Self.fixed(Self.number(spent, "daemons"), 1)) s",
                    "avahi-daemons \(Self.fixed(Self.number(spent, "avahi_daemons"), 1)) s")
            }
            if let memory = find("mesh", arguments, ["metric": "mesh_anon_rss_kib"]) {
                add(
                    "mesh of \(hosts) (\(how)): anonymous memory, median",
                    "\(Self.fixed(Self.number(memory, "median") / 1024, 1)) MiB")
            }
            for (load, goal, shown) in [("idle", 0.5, "0.5"), ("60Hz", 3.0, "3")] {
                guard let row = find("mesh", arguments, ["metric": "mesh_cpu_percent", "load": load]) else { continue }
                let judged = hosts <= 3  // the goals are for a small session; bigger ones show the cost per peer
                let mean = Self.number(row, "mean")
                add(
                    "mesh of \(hosts) (\(how)): CPU per daemon, \(load == "60Hz" ? "bubbles at 60 Hz" : "idle")",
                    "\(Self.fixed(mean, 2)) %", goal: judged ? "≤ \(shown) %" : "",
                    met: judged ? mean <= goal : nil)
            }
        }
    }

    /// The table, columns as wide as their widest cell.
    func print() {
        let headers = ["figure", "value", "anchor (same run)", "ratio", "goal", "met"]
        let lines = [headers] + table
        let widths = headers.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        var system = utsname()
        uname(&system)
        let machine = withUnsafeBytes(of: &system.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let release = withUnsafeBytes(of: &system.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        OutputOptions.write("scripts/bench all on \(cpus) CPUs (\(machine), Linux \(release))")
        for line in lines {
            let cells = zip(line, widths).map { cell, width in
                cell.padding(toLength: max(width, cell.count), withPad: " ", startingAt: 0)
            }
            var text = cells.joined(separator: "  ")
            while text.last == " " { text.removeLast() }
            OutputOptions.write(text)
        }
    }
}
