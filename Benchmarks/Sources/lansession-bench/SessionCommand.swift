import ArgumentParser
import SessionBenchmark

/// Round-trip latency on 127.0.0.1: plain SwiftNIO TCP and UDP ping-pong, then two sessions pinging on the reliable
/// link and the unreliable channel, over --insecure links and sealed.
struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Round trips on 127.0.0.1: SwiftNIO TCP and UDP ping-pong, then two sessions.")

    @OptionGroup var output: OutputOptions

    @Option(help: "Timed round trips per row (after 1000 untimed ones).")
    var count = 10_000

    func validate() throws {
        guard count > 0 else { throw ValidationError("--count needs a positive whole number") }
    }

    func run() async throws {
        try await SessionBench.run(json: output.json, count: count)
    }
}
