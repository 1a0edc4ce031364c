import ArgumentParser
import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// `web`: how long a drag takes to reach another device's page, and what a page costs its daemon. Two test hosts, a
/// release sessiond on each serving its page (--http), headless Chromium in host 1 with both pages open, driven by
/// chromedriver (W3C WebDriver). Over N drags of a bubble on host 1's page: from each pointer event to the frame that
/// draws the move on host 2's page, with frames at 60 a second (what a person sees), then unthrottled; also to the
/// move's arrival in page 2. Beside it, the daemons' own reliable round trip. Then each daemon's CPU with no page, a
/// page open and idle, and a drag at 60 moves a second.
struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "(root) A drag on one test host's page to the frame drawn on another's, in headless Chromium.",
        discussion: "Needs chromium and chromium-driver (scripts/bench installs them).")

    /// Which half alone.
    enum Only: String, EnumerableFlag {
        case latencyOnly
        case cpuOnly
    }

    @OptionGroup var output: OutputOptions

    @Option(help: "Drags timed per row, 1...9999.")
    var drags = 200

    @Option(help: "Seconds of each CPU figure, 1...999.")
    var cpuSeconds = 20

    @Flag(help: "Only the latency rows, or only the CPU figures.")
    var only: Only?

    func validate() throws {
        guard (1...9999).contains(drags) else { throw ValidationError("--drags needs 1...9999") }
        guard (1...999).contains(cpuSeconds) else { throw ValidationError("--cpu-seconds needs 1...999") }
    }

    func run() async throws {
        let report = try await TestHostLab.with("web", hosts: 2) { lab in try measure(lab) }
        report.print(json: output.json)
    }

    private func measure(_ lab: TestHostLab) throws -> WebReport {
        let address2 = try lab.address(ofHost: 2)
        let common = [
            "--admission", "open", "--session", "web-bench", "--port", "47000", "--state-dir", "/run/web-state",
        ]
        let daemon1 = try lab.spawn(
            inHost: 1,
            [lab.bin + "/sessiond", "--name", "h1"] + common + ["--http", "127.0.0.1:8080", "--log-level", "warning"])
        let daemon2 = try lab.spawn(
            inHost: 2,
            [lab.bin + "/sessiond", "--name", "h2"] + common + ["--http", "\(address2):8080", "--log-level", "warning"])
        let sockets = try (1...2).map { try lab.path(inHost: $0, "/run/lansession/sessiond.sock") }
        Polling.until(100, every: 0.1) {
            guard let client = try? ControlClient(path: sockets[0]),
                let status = try? client.call(.status, as: StatusResult.self)
            else { return false }
            return status.peers == 1
        }
        let urls = try sockets.map {
            try ControlClient.connect(path: $0, within: 10).call(.web, as: WebResult.self).url
        }
        let host1 = "/proc/\(try lab.holderPID(ofHost: 1))/ns/net"
        var report = WebReport()
        if only != .latencyOnly {
            usleep(2_000_000)  // past the join's own work
            let cpu = PageDragCPU(
                page: urls[0], otherPage: urls[1], daemons: [daemon1.pid, daemon2.pid], seconds: Double(cpuSeconds))
            report.cpu = try NetworkNamespace.run(at: host1) { try cpu.measure() }
        }
        if only != .cpuOnly {
            let port = 9515
            let driver = try lab.spawn(
                inHost: 1, ["chromedriver", "--port=\(port)"], stdout: .discard,
                stderr: .file(lab.work + "/chromedriver.log"))
            defer { driver.terminate() }
            for unthrottled in [false, true] {
                let latency = PageLatency(port: port, pages: (urls[0], urls[1]), drags: drags, unthrottled: unthrottled)
                report.latency.append(
                    try NetworkNamespace.run(at: host1) {
                        try WebDriver.waitForDriver(port: port)
                        return try latency.measure()
                    })
            }
        }
        let daemons = try ControlClient(path: sockets[0]).callRaw(.bench(.init(peer: "h2", count: 2000)))
        let prefix = #"{"ok":true,"result":"#
        let line = String(decoding: daemons, as: UTF8.self)
        guard line.hasPrefix(prefix), line.hasSuffix("}") else { throw BenchFailure("web: bench refused: \(line)") }
        report.daemons = String(line.dropFirst(prefix.count).dropLast())
        return report
    }
}
