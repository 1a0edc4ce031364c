import ArgumentParser
import SessionControl

/// `increment`: presses the counter N times in one request.
struct Increment: RequestCommand {
    static let configuration = CommandConfiguration(
        abstract: "Increments this peer's counter; returns once the daemon has persisted it.")

    @OptionGroup var global: GlobalOptions

    @Option(
        name: [.customShort("n"), .customLong("count")], parsing: .unconditional,
        help: "How many increments (\(Limits.count.lowerBound)...\(Limits.count.upperBound)).")
    var count = CommandLineNumber(1)

    func validate() throws {
        try count.validated("--count", in: Limits.count)
    }

    func request() -> ControlCommand { ControlCommand.increment(count: count.value(or: 1)) }

    /// What was added, this peer's count and the total: "added 3: this peer 12, total 40".
    func printText(_ result: IncrementResult, daemon: Daemon) throws(ClientError) {
        // The total comes from a second request; without it the line still says what was added.
        let total = try? daemon.call(ControlCommand.counter).decode(CounterResult.self).total
        Output.line(
            "added \(count.value(or: 1)): this peer \(result.local)" + (total.map { ", total \($0)" } ?? ""))
    }
}
