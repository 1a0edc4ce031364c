import ArgumentParser
import Foundation
import PageBenchmark
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// What open pages cost a release sessiond on 127.0.0.1 (no discovery, no peer): N pages reading while one drags at
/// 60 Hz and one floods moves; the daemon runs on CPU 0 and the pages (this process) on CPU 1, in every row.
struct PagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pages",
        abstract: "What open pages cost a release sessiond on 127.0.0.1.")

    @OptionGroup var output: OutputOptions

    @Option(help: "Seconds per row (1...999).")
    var seconds = 8

    @Option(help: "Page counts, comma-separated (1...999 each; default 1,20,200).")
    var pages: String?

    private var pageCounts: [Int]? {
        pages.map { $0.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) ?? 0 } }
    }

    func validate() throws {
        guard (1...999).contains(seconds) else { throw ValidationError("--seconds needs 1...999") }
        if let pageCounts, !pageCounts.allSatisfy({ (1...999).contains($0) }) {
            throw ValidationError("--pages needs counts 1...999, comma-separated")
        }
    }

    func run() async throws {
        let bin = try Repository.releaseBuild(["sessiond"])
        let work = try Repository.scratchDirectory("pages")
        defer { try? FileManager.default.removeItem(atPath: work) }
        // Two hundred pages and the benchmark's own sockets.
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        if getrlimit(resource, &limit) == 0 && limit.rlim_cur < 4096 {
            limit.rlim_cur = min(4096, limit.rlim_max)
            _ = setrlimit(resource, &limit)
        }
        // Every row pinned the same way, the baseline too: the daemon on CPU 0, the pages on CPU 1 (on a one-CPU
        // machine, both on CPU 0).
        let benchCPU = ProcessInfo.processInfo.activeProcessorCount >= 2 ? 1 : 0
        let control = work + "/sessiond.sock"
        let daemon = Subprocess(
            [
                "taskset", "-c", "0", bin + "/sessiond", "--no-discovery", "--listen", "127.0.0.1", "--port", "0",
                "--http", "127.0.0.1:0", "--admission", "open", "--name", "page-bench", "--state-dir", work + "/state",
                "--control", control, "--log-level", "warning",
            ], stderr: .file(work + "/sessiond.log"))
        try daemon.start()
        let trap = SignalTrap.add { daemon.stop() }
        defer {
            SignalTrap.remove(trap)
            daemon.stop()
        }
        let url = try pageAddress(control: control, daemon: daemon, log: work + "/sessiond.log")
        try Subprocess.run(["taskset", "-a", "-p", "-c", String(benchCPU), String(getpid())], stdout: .discard)
        try await PageBench.run(
            .init(url: url, control: control, pid: daemon.pid, seconds: seconds, pages: pageCounts, json: output.json))
    }

    /// The daemon's page, asked on its control socket once it answers (10 s at most).
    private func pageAddress(control: String, daemon: Subprocess, log: String) throws -> String {
        for _ in 0..<100 {
            if let client = try? ControlClient(path: control),
                let web = try? client.call(.web, as: WebResult.self)
            {
                return web.url
            }
            guard daemon.isRunning else { break }
            usleep(100_000)
        }
        if let text = try? String(contentsOfFile: log, encoding: .utf8) { Repository.note(text) }
        throw BenchFailure("pages: sessiond did not start")
    }
}
