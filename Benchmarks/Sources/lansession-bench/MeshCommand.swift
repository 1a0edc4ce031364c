import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `mesh N`: a mesh of N test hosts, each with its own avahi-daemon and a release sessiond with discovery on, all
/// started at once: the time from the last start until every daemon has N-1 connected peers, each daemon's anonymous
/// memory, and its CPU time idle and under load (the three bubble holders move them at 60 Hz, every other daemon sends
/// a move-sized unreliable message to every peer at 60 Hz).
struct MeshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mesh",
        abstract: "(root) N test hosts, a sessiond each, started at once: time to a full mesh, memory and CPU.",
        discussion: """
            Links are encrypted (admission open, or the secret with --secret); --insecure measures without the \
            handshake. --static runs the daemons without avahi (--no-discovery), each given host 1's address only: \
            the rest of the mesh comes from the members exchange. --logs keeps each daemon's debug log in DIR/hI.log.
            """)

    @OptionGroup var output: OutputOptions

    @Argument(help: "How many test hosts, 2...64.")
    var hosts: Int

    @Option(help: "Seconds of each CPU figure, 1...99.")
    var seconds = 10

    @Flag(help: "Admission by a shared secret.")
    var secret = false

    @Flag(help: "Links not sealed.")
    var insecure = false

    @Flag(name: .customLong("static"), help: "No avahi: each daemon dials host 1; the members exchange does the rest.")
    var staticPeers = false

    @Option(help: "Keeps each daemon's debug log in DIR/hI.log.")
    var logs: String?

    func validate() throws {
        guard (2...64).contains(hosts) else { throw ValidationError("needs a host count 2...64 first") }
        guard (1...99).contains(seconds) else { throw ValidationError("--seconds needs 1...99") }
        if let logs {
            var directory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: logs, isDirectory: &directory), directory.boolValue else {
                throw ValidationError("--logs needs a directory")
            }
        }
    }

    func run() async throws {
        let figures = try await TestHostLab.with("mesh", hosts: hosts) { lab in
            try measure(lab)
        }
        figures.print(json: output.json)
    }

    private func measure(_ lab: TestHostLab) throws -> MeshFigures {
        var extra = ["--admission", "open"]
        if insecure { extra.append("--insecure") }
        if secret {
            let path = lab.work + "/secret"
            try Subprocess.run(
                [
                    "sh", "-c", "head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > \"$1\"; chmod 600 \"$1\"", "sh",
                    path,
                ])
            extra = ["--secret-file", path]
        }
        let holders = try (1...hosts).map { try lab.holderPID(ofHost: $0) }
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        let avahis = try (1...hosts).map { host in
            let text = try String(
                contentsOfFile: "\(base)/lansession-testnet/\(lab.lab)/h\(host).avahi.pid", encoding: .utf8)
            guard let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw BenchFailure("mesh: no avahi-daemon pid for host \(host)")
            }
            return pid
        }
        // The lab's avahi-daemons register their host names when it comes up: wait (at most 20 s) until they are
        // quiet, so that what is measured is the daemons' start and not the lab's.
        let avahiTicks = { try avahis.reduce(0) { $0 + (try ProcessStats.cpuTicks($1)) } }
        var quiet = 0
        var previous = try avahiTicks()
        for _ in 0..<40 where quiet < 2 {
            usleep(500_000)
            let now = try avahiTicks()
            quiet = now - previous <= 2 ? quiet + 1 : 0
            previous = now
        }
        let avahiBefore = try avahis.reduce(0.0) { $0 + (try ProcessStats.cpuSeconds($1)) }
        // With avahi, the mDNS packets the start causes: counted on the lab's switch (receiving only).
        let sniffer = staticPeers ? nil : try MDNSSniffer(namespace: "/run/netns/\(lab.lab)-sw", bridge: "br0")
        defer { _ = sniffer?.stop() }
        let address1 = try lab.address(ofHost: 1)
        let socketPaths = holders.map { "/proc/\($0)/root/run/mesh.sock" }
        // From here the machine's CPUs are the daemons'.
        let machineBefore = try ProcessStats.machineTicks()
        var daemons: [Int32] = []
        for host in 1...hosts {
            var found: [String] = []
            if staticPeers {
                found = ["--no-discovery"]
                if host > 1 { found += ["--peer", "\(address1):47000"] }
            }
            let level = logs == nil ? "warning" : "debug"
            let daemon = try lab.spawn(
                inHost: host,
                [
                    lab.bin + "/sessiond", "--name", "h\(host)", "--session", "mesh-bench", "--port", "47000",
                    "--state-dir", "/run/mesh-state", "--control", "/run/mesh.sock", "--max-peers", String(hosts - 1),
                    "--log-level", level,
                ] + extra + found,
                stderr: logs.map { .file("\($0)/h\(host).log") } ?? .inherit)
            daemons.append(daemon.pid)
        }
        let start = MeshWatch.now()
        let watch = try MeshWatch(paths: socketPaths, start: start).waitForMesh()
        let machineAfter = try ProcessStats.machineTicks()
        var figures = MeshFigures(hosts: hosts, seconds: seconds)
        figures.meshed = watch.meshed.map { Double($0) / 1e6 }
        figures.serving = watch.serving.map { Double($0) / 1e6 }
        figures.busyPercent =
            100 * Double(machineAfter.busy - machineBefore.busy)
            / Double(max(1, machineAfter.total - machineBefore.total))
        let load = try MeshLoad(paths: socketPaths, daemons: daemons)
        // CPU the daemons took from their start until all were meshed, and what the avahi-daemons took meanwhile.
        figures.meshCPU = try daemons.map { try ProcessStats.cpuSeconds($0) }
        figures.avahiCPU = try avahis.reduce(0.0) { $0 + (try ProcessStats.cpuSeconds($1)) } - avahiBefore
        figures.anonymous = try daemons.map { try ProcessStats.anonymousKiB($0) }
        let idleFrom = MeshWatch.now()
        figures.idleCPU = try load.cpu(over: Double(seconds), moving: false).percent
        let idleUntil = MeshWatch.now()
        (figures.loadCPU, figures.frames) = try load.cpu(over: Double(seconds), moving: true)
        if let sniffer {
            figures.mdns = MeshFigures.MDNS(
                sniffer.stop(), start: start, meshed: watch.meshed.max() ?? 0, idle: idleFrom...idleUntil)
        }
        return figures
    }
}
