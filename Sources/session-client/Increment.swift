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

    func request() -> ControlRequest { ControlRequest(command: "increment", count: count.value(or: 1)) }

    func printText(_ result: IncrementResult, daemon: Daemon) throws(ClientError) {
        Output.line(Output.times(result.local))
    }
}
