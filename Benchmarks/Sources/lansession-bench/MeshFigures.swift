import Foundation

/// What `mesh` measured, and its report: JSON rows, or lines for people.
struct MeshFigures {
    /// mDNS packets on the lab's switch from the last start until all were meshed, and while idle afterwards.
    struct MDNS {
        var packets = 0
        var queries = 0
        var responses = 0
        var bytes = 0
        var untilMilliseconds: Double
        var idlePerSecond: Double

        init(_ seen: [MDNSSniffer.Packet], start: UInt64, meshed: UInt64, idle: ClosedRange<UInt64>) {
            untilMilliseconds = Double(meshed) / 1e6
            var idleCount = 0
            for packet in seen {
                if (start...(start + meshed)).contains(packet.nanoseconds) {
                    packets += 1
                    if packet.response { responses += 1 } else { queries += 1 }
                    bytes += packet.bytes
                } else if idle.contains(packet.nanoseconds) {
                    idleCount += 1
                }
            }
            idlePerSecond = Double(idleCount) / (Double(idle.upperBound - idle.lowerBound) / 1e9)
        }
    }

    let hosts: Int
    let seconds: Int
    /// Milliseconds from the last start until each daemon was meshed, and until it served its control socket.
    var meshed: [Double] = []
    var serving: [Double] = []
    var busyPercent = 0.0
    /// CPU seconds of each daemon until meshed; of all avahi-daemons meanwhile.
    var meshCPU: [Double] = []
    var avahiCPU = 0.0
    var anonymous: [Int] = []
    /// Each daemon's CPU, % of one CPU, idle and at 60 Hz.
    var idleCPU: [Double] = []
    var loadCPU: [Double] = []
    var frames = 0
    var mdns: MDNS?

    init(hosts: Int, seconds: Int) {
        self.hosts = hosts
        self.seconds = seconds
    }

    /// Python's `statistics.median`: the middle value, or the mean of the two middle ones (then never whole).
    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    private static func median(_ values: [Int]) -> BenchValue {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1
            ? .integer(sorted[middle]) : .number(Double(sorted[middle - 1] + sorted[middle]) / 2)
    }

    private static func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    private var datagramsPerSecond: Int {
        Int((Double(frames * hosts * (hosts - 1)) / Double(seconds)).rounded(.toNearestOrEven))
    }

    var rows: [BenchRow] {
        let last = meshed.max() ?? 0
        var rows = [
            BenchRow([
                "metric": "mesh_connected_ms", "hosts": .integer(hosts), "last": .number(last),
                "median": .number(Self.median(meshed)), "first": .number(meshed.min() ?? 0),
                "last_serving": .number(serving.max() ?? 0), "after_last_serving": .number(last - (serving.max() ?? 0)),
            ]),
            BenchRow([
                "metric": "mesh_cpu_seconds", "hosts": .integer(hosts), "daemons": .number(meshCPU.reduce(0, +)),
                "max": .number(meshCPU.max() ?? 0), "avahi_daemons": .number(avahiCPU),
                "cpus": .integer(ProcessInfo.processInfo.activeProcessorCount),
                "machine_busy_percent": .number(busyPercent),
            ]),
            BenchRow([
                "metric": "mesh_anon_rss_kib", "hosts": .integer(hosts), "max": .integer(anonymous.max() ?? 0),
                "median": Self.median(anonymous), "min": .integer(anonymous.min() ?? 0),
            ]),
            BenchRow([
                "metric": "mesh_cpu_percent", "hosts": .integer(hosts), "load": "idle", "seconds": .integer(seconds),
                "mean": .number(Self.mean(idleCPU)), "max": .number(idleCPU.max() ?? 0),
                "total": .number(idleCPU.reduce(0, +)),
            ]),
            BenchRow([
                "metric": "mesh_cpu_percent", "hosts": .integer(hosts), "load": "60Hz", "seconds": .integer(seconds),
                "frames": .integer(frames), "datagrams_per_second": .integer(datagramsPerSecond),
                "mean": .number(Self.mean(loadCPU)), "max": .number(loadCPU.max() ?? 0),
                "total": .number(loadCPU.reduce(0, +)),
            ]),
        ]
        if let mdns {
            rows.append(
                BenchRow([
                    "metric": "mesh_mdns", "hosts": .integer(hosts), "packets": .integer(mdns.packets),
                    "queries": .integer(mdns.queries), "responses": .integer(mdns.responses),
                    "bytes": .integer(mdns.bytes), "until_ms": .number(mdns.untilMilliseconds),
                    "idle_packets_per_second": .number(mdns.idlePerSecond),
                ]))
        }
        return rows
    }

    func print(json: Bool) {
        guard !json else { return rows.forEach { OutputOptions.write($0.jsonLine) } }
        let write = OutputOptions.write
        let last = meshed.max() ?? 0
        let lastServing = serving.max() ?? 0
        let anonymousMedian = Self.median(anonymous.map(Double.init))
        write("mesh of \(hosts) test hosts, all daemons started at once")
        write(
            "  every daemon sees \(hosts - 1) connected peers: "
                + String(
                    format: "%.0f ms after the last start (first %.0f ms, median %.0f ms)", last, meshed.min() ?? 0,
                    Self.median(meshed)))
        write(
            String(
                format: "  the last daemon served its control socket %.0f ms after the last start: all meshed %.0f ms "
                    + "after that", lastServing, last - lastServing))
        write(
            String(
                format: "  CPU until then: all daemons %.2f s (max %.2f s), all avahi-daemons %.2f s; the machine's %d "
                    + "CPUs were %.0f%% busy from the first start until then", meshCPU.reduce(0, +), meshCPU.max() ?? 0,
                avahiCPU, ProcessInfo.processInfo.activeProcessorCount, busyPercent))
        write(
            String(
                format: "  anonymous memory per daemon: median %.1f MiB, max %.1f MiB", anonymousMedian / 1024,
                Double(anonymous.max() ?? 0) / 1024))
        write(
            String(
                format: "  CPU per daemon, %% of a core, idle:  mean %.2f  max %.2f  all daemons %.1f",
                Self.mean(idleCPU),
                idleCPU.max() ?? 0, idleCPU.reduce(0, +)))
        write(
            String(
                format: "  CPU per daemon, %% of a core, 60 Hz: mean %.2f  max %.2f  all daemons %.1f  (%d datagrams/s "
                    + "received in all)", Self.mean(loadCPU), loadCPU.max() ?? 0, loadCPU.reduce(0, +),
                datagramsPerSecond))
        if let mdns {
            write(
                String(
                    format:
                        "  mDNS on the link until all were meshed: %d packets (%d queries, %d responses, %.0f KiB), "
                        + "%.0f per host; idle afterwards %.1f packets/s", mdns.packets, mdns.queries, mdns.responses,
                    Double(mdns.bytes) / 1024, Double(mdns.packets) / Double(hosts), mdns.idlePerSecond))
        }
    }
}
