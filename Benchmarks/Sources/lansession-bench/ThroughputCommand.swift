import ArgumentParser

/// Increments and messages per second over one reliable link, next to SwiftNIO TCP and TLS.
struct ThroughputCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "throughput",
        abstract: "Increments and messages per second over one reliable link, next to SwiftNIO TCP and TLS.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("throughput")
    }
}
