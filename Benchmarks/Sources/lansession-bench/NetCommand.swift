import ArgumentParser
import Foundation

/// Round trips between two test hosts, side by side in one run, rounds interleaved: sockperf TCP and UDP ping-pong
/// (the kernel's floor), ENet reliable and unsequenced ping-pong (the peer to beat; Benchmarks/enet-pingpong), and
/// `bench` between two release sessiond (reliable, unreliable; and reliable between two --insecure ones, for what
/// sealing costs); last, an increment asked of host 1's daemon until host 2's watch shows it.
///
/// Every row makes the same number of round trips and every row's two ends are pinned the same way (``Placement``);
/// prints p50/p90/p99 in microseconds per row and placement (the median over the rounds of each percentile) and each
/// row's p50 ratio to sockperf TCP and to ENet reliable in the same placement.
struct NetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "net",
        abstract: "(root) Round trips between two test hosts: sockperf, ENet and two release sessiond.")

    @OptionGroup var output: OutputOptions

    @Option(help: "Interleaved rounds (1...99); each figure is the median over them.")
    var rounds = 3

    @Option(help: "Round trips per row (100...9999999); the increment row makes a tenth of them.")
    var count = 10_000

    @Option(help: "Message size in bytes (1...1000).")
    var size = 16

    @Option(help: "split: the hosts on CPUs 0 and 1; same: both on CPU 0; both: each round in both.")
    var placement = Placement.both

    @Option(help: "Also draw the rows as latency distributions in this standalone SVG file.")
    var svg: String?

    func validate() throws {
        guard (1...99).contains(rounds) else { throw ValidationError("--rounds needs 1...99") }
        guard (100...9_999_999).contains(count) else { throw ValidationError("--count needs 100...9999999") }
        guard (1...1000).contains(size) else { throw ValidationError("--size needs 1...1000 bytes") }
        if let svg, svg.isEmpty { throw ValidationError("--svg needs a file") }
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        if cpus < 2 && placement.measured.contains(.split) {
            throw ValidationError(
                "the split placement needs two CPUs (this machine has \(cpus)); use --placement same")
        }
    }

    func run() async throws {
        let report = try await TestHostLab.with("net", hosts: 2) { lab in
            let bench = try NetRoundTrips(lab: lab, count: count, size: size)
            try bench.startEnds()
            var samples: [NetReport.Sample] = []
            for round in 1...rounds {
                for current in placement.measured {
                    Repository.note("round \(round) of \(rounds), \(current.rawValue)")
                    try bench.pin(current)
                    samples += try bench.round(current)
                }
            }
            return NetReport(samples: samples, size: size, rounds: rounds, count: count)
        }
        report.print(output)
        if let svg {
            try report.drawSVG(svg)
            Repository.note("bench net: wrote \(svg)")
        }
    }
}
