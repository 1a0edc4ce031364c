import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// The measuring side of `net`: the ends that keep running in the two hosts (sockperf and ENet servers, two pairs of
/// release sessiond), pinned anew for each placement, and one round of every row.
final class NetRoundTrips {
    private let lab: TestHostLab
    private let count: Int
    private let size: Int
    private let address1: String
    private let address2: String
    private let enet: String
    /// The ends that keep running, by host: pinned anew for each placement.
    private var ends1: [Int32] = []
    private var ends2: [Int32] = []
    /// The CPU of host 1's end: the clients run there too.
    private var cpu1 = 0

    /// The sealed pair's control socket (the default) and the --insecure pair's, in each host.
    static let sealedControl = "/run/lansession/sessiond.sock"
    static let insecureControl = "/run/net-insecure.sock"

    init(lab: TestHostLab, count: Int, size: Int) throws {
        self.lab = lab
        self.count = count
        self.size = size
        address1 = try lab.address(ofHost: 1)
        address2 = try lab.address(ofHost: 2)
        enet = lab.work + "/enet_pingpong"
        try Subprocess.run(
            [
                "gcc", "-O2", "-Wall", "-Wextra", "-o", enet,
                Repository.path("Benchmarks/enet-pingpong/enet_pingpong.c"),
                "-lenet",
            ], stdout: .standardError)
    }

    /// Starts the servers and the daemons, and waits until both pairs are connected with UDP as their unreliable
    /// route.
    func startEnds() throws {
        func spawn(_ host: Int, _ command: [String], stdout: Subprocess.Stream = .inherit) throws {
            let pid = try lab.spawn(inHost: host, command, stdout: stdout, stderr: stdout).pid
            if host == 1 { ends1.append(pid) } else { ends2.append(pid) }
        }
        try spawn(2, ["sockperf", "server", "--tcp", "-i", address2, "-p", "11111"], stdout: .discard)
        try spawn(2, ["sockperf", "server", "-i", address2, "-p", "11112"], stdout: .discard)
        try spawn(2, [enet, "server", "11113"], stdout: .discard)
        let daemon = [lab.bin + "/sessiond", "--admission", "open", "--no-discovery", "--log-level", "warning"]
        try spawn(
            1, daemon + ["--name", "h1", "--session", "net-bench", "--port", "47000", "--state-dir", "/run/net-state"])
        try spawn(
            2,
            daemon + [
                "--name", "h2", "--session", "net-bench", "--port", "47000", "--state-dir", "/run/net-state",
                "--peer", "\(address1):47000",
            ])
        // A second pair, --insecure (nothing sealed), on their own port and control sockets: what sealing costs, in
        // the same run.
        let insecure =
            daemon + [
                "--insecure", "--session", "net-bench-insecure", "--port", "47001", "--state-dir", "/run/net-insecure",
                "--control", Self.insecureControl,
            ]
        try spawn(1, insecure + ["--name", "i1"])
        try spawn(2, insecure + ["--name", "i2", "--peer", "\(address1):47001"])
        for control in [Self.sealedControl, Self.insecureControl] {
            try waitForDatagrams(control)
        }
        usleep(500_000)
    }

    /// Waits (10 s at most) until host 1's daemon at `control` has a peer whose unreliable route is UDP.
    private func waitForDatagrams(_ control: String) throws {
        let path = try lab.path(inHost: 1, control)
        for _ in 0..<100 {
            if let client = try? ControlClient(path: path),
                let peers = try? client.call(.peers, as: [PeerResult].self),
                peers.contains(where: { $0.unreliable == "udp" })
            {
                return
            }
            usleep(100_000)
        }
        throw BenchFailure("net: the daemons at \(control) did not connect over UDP within 10 s")
    }

    /// Pins every thread of host 1's running ends to one CPU and host 2's to another (or the same).
    func pin(_ placement: Placement) throws {
        let (first, second) = placement.cpus
        cpu1 = first
        for (pids, cpu) in [(ends1, first), (ends2, second)] {
            for pid in pids {
                try Subprocess.run(["taskset", "-a", "-p", "-c", String(cpu), String(pid)], stdout: .discard)
            }
        }
    }

    /// One round of every row in the current placement.
    func round(_ placement: Placement) throws -> [NetReport.Sample] {
        [
            try sockperf("sockperf-tcp", ["--tcp", "-p", "11111"], placement),
            try sockperf("sockperf-udp", ["-p", "11112"], placement),
            try enetRow("enet-reliable", mode: "reliable", placement),
            try enetRow("enet-unsequenced", mode: "unsequenced", placement),
            try sessionRow("sessiond-reliable", .reliable, control: Self.sealedControl, peer: "h2", placement),
            try sessionRow("sessiond-unreliable", .unreliable, control: Self.sealedControl, peer: "h2", placement),
            try sessionRow(
                "sessiond-reliable-insecure", .reliable, control: Self.insecureControl, peer: "i2", placement),
            try incrementToWatch("increment-to-watch", placement),
        ]
    }

    /// sockperf runs for a time, not a count: long enough for the count at 150 µs a round trip, its log of every
    /// round trip kept, and the first `count` after its warm-up taken, as many as the other rows make.
    private func sockperf(_ row: String, _ arguments: [String], _ placement: Placement) throws -> NetReport.Sample {
        let log = lab.work + "/sockperf.log"
        try lab.run(
            inHost: 1,
            ["taskset", "-c", String(cpu1), "sockperf", "ping-pong"] + arguments + [
                "-i", address2, "-m", String(size), "-t", String(count * 150 / 1_000_000 + 1), "--full-rtt",
                "--full-log", log,
            ], stdout: .discard, stderr: .discard)
        var samples: [Double] = []
        for line in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            let first = fields.first?.trimmingCharacters(in: .whitespaces) ?? ""
            guard fields.count == 4, !first.isEmpty, first.allSatisfy(\.isASCII), first.allSatisfy(\.isNumber),
                let value = Double(fields[3].trimmingCharacters(in: .whitespaces))
            else { continue }
            samples.append(value)
        }
        guard samples.count >= count else {
            throw BenchFailure("net: sockperf made \(samples.count) round trips, not \(count)")
        }
        let sorted = samples.prefix(count).sorted()
        let pick = { (quantile: Double) in
            BenchValue.rounded(sorted[min(sorted.count - 1, Int(quantile * Double(sorted.count)))], 3).double!
        }
        return NetReport.Sample(row: row, placement: placement, p50: pick(0.5), p90: pick(0.9), p99: pick(0.99))
    }

    private func enetRow(_ row: String, mode: String, _ placement: Placement) throws -> NetReport.Sample {
        let text = try lab.output(
            inHost: 1,
            ["taskset", "-c", String(cpu1), enet, "client", address2, "11113", String(count), String(size), mode])
        struct Percentiles: Decodable {
            var p50_us: Double
            var p90_us: Double
            var p99_us: Double
        }
        let result = try JSONDecoder().decode(Percentiles.self, from: Data(text.utf8))
        return NetReport.Sample(
            row: row, placement: placement, p50: result.p50_us, p90: result.p90_us, p99: result.p99_us)
    }

    /// `bench` asked of host 1's daemon at `control`: its round trips to `peer`.
    private func sessionRow(
        _ row: String, _ channel: ControlChannel, control: String, peer: String, _ placement: Placement
    ) throws -> NetReport.Sample {
        let client = try ControlClient(path: try lab.path(inHost: 1, control))
        let result = try client.call(
            .bench(.init(peer: peer, channel: channel, count: count, size: size)), as: BenchResult.self)
        return NetReport.Sample(
            row: row, placement: placement, p50: result.p50_us, p90: result.p90_us, p99: result.p99_us)
    }

    /// The end-to-end path: an increment asked of host 1's daemon on its control socket until the counter event shows
    /// in a watch of host 2's daemon, count / 10 of them after a tenth of that untimed; this thread on host 1's CPU.
    private func incrementToWatch(_ row: String, _ placement: Placement) throws -> NetReport.Sample {
        let sender = try ControlClient(path: try lab.path(inHost: 1, Self.sealedControl))
        let watcher = try ControlClient(path: try lab.path(inHost: 2, Self.sealedControl))
        let me = try sender.call(.status, as: StatusResult.self).peerID
        try watcher.startWatching()
        let timed = count / 10
        var samples: [Double] = []
        try CPUAffinity.onCPU(cpu1) {
            for index in 0..<(timed + timed / 10) {
                let start = ContinuousClock.now
                try sender.send(.increment(count: 1))
                while true {
                    if case .counter(let peerID, _, _) = try watcher.nextEvent(), peerID == me { break }
                }
                let elapsed = ContinuousClock.now - start
                let reply = try JSONDecoder().decode(ControlReplyHead.self, from: try sender.readLine())
                guard reply.ok else { throw BenchFailure("net: increment refused: \(reply.error ?? "")") }
                if index >= timed / 10 {
                    samples.append(
                        Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
                }
            }
        }
        samples.sort()
        let pick = { (quantile: Double) in
            BenchValue.rounded(samples[min(samples.count - 1, Int(Double(samples.count) * quantile))], 1).double!
        }
        return NetReport.Sample(row: row, placement: placement, p50: pick(0.5), p90: pick(0.9), p99: pick(0.99))
    }
}
