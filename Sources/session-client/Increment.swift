import ArgumentParser
import SessionControl

/// `increment`: presses the counter N times in one request.
struct Increment: RequestCommand {
    static let configuration = CommandConfiguration(
        abstract: "Increments this peer's counter; returns once the daemon has persisted it.")

    @OptionGroup var global: GlobalOptions

    @Option(name: [.customShort("n"), .customLong("count")], help: "How many increments (at least 1).")
    var count = 1

    func validate() throws {
        guard count >= 1 else { throw ValidationError("-n must be at least 1 (got \(count))") }
    }

    func request() -> ControlRequest { ControlRequest(command: "increment", count: count) }

    func printText(_ result: IncrementResult, daemon: Daemon) throws(ClientError) {
        Output.line(Output.times(result.local))
    }
}
