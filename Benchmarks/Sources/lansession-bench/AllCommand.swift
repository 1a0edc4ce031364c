import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Every figure of the benchmarks in one run, each beside its anchor: round trips (sockperf, ENet), the control path,
/// a pushed file (iperf3, a raw copy, scp; unsealed and sealed), messages and increments (plain SwiftNIO TCP), the
/// page (latency and CPU), a join, and meshes of 3 and 32 test hosts with Avahi and of 64 with --static. One JSON
/// object a line, each with the "bench" that made it; without --json, a table of the main figures at the end. Takes
/// about 15 minutes.
struct AllCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all",
        abstract: "(root) Every benchmark that runs on test hosts, in one run, and a table of the main figures.")

    @OptionGroup var output: OutputOptions

    /// The benchmarks and their arguments, in the order they run.
    static let runs: [[String]] = [
        ["net", "--rounds", "3", "--count", "10000"], ["push", "--insecure"], ["push"], ["throughput"],
        ["join", "--trials", "5"], ["web", "--drags", "50", "--cpu-seconds", "20"], ["pages"], ["mesh", "3"],
        ["mesh", "32"], ["mesh", "64", "--static"],
    ]

    func run() async throws {
        guard getuid() == 0 else { throw BenchFailure("all: needs root (test hosts)") }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        var lines: [String] = []
        var failed: [String] = []
        for run in Self.runs {
            let name = run[0]
            let arguments = run.dropFirst().joined(separator: " ")
            Repository.note("bench all: \(run.joined(separator: " "))")
            let child = Subprocess([executable] + run + ["--json"], stdout: .capture, stderr: .inherit)
            var text = ""
            do {
                try child.start()
                text = try child.wait()
            } catch {
                failed.append(run.joined(separator: " "))
            }
            // Each row marked with the bench and its arguments (the rows of a failed one too, as far as they came).
            for line in text.split(separator: "\n") where line.hasPrefix("{") {
                let rest = line.dropFirst().drop { $0 == " " }
                let marks =
                    "{\"bench\": \(BenchValue.quoted(name)), \"arguments\": \(BenchValue.quoted(arguments))"
                lines.append(rest.hasPrefix("}") ? marks + "}" : marks + ", " + rest)
            }
            if name == "push" && run.count == 1 {
                // The pushes leave hundreds of MB of written files in the page cache: they reach the disk now, not
                // while the loopback figures after them run on the same two CPUs.
                try? Subprocess.run(["sync"])
            }
        }
        if output.json {
            lines.forEach(OutputOptions.write)
        } else {
            AllTable(lines: lines).print()
        }
        if !failed.isEmpty {
            for run in failed { Repository.note("bench all: failed: \(run)") }
            throw ExitCode(1)
        }
    }
}
