import ArgumentParser

/// Round trips on 127.0.0.1: SwiftNIO TCP and UDP ping-pong, then two sessions.
struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Round trips on 127.0.0.1: SwiftNIO TCP and UDP ping-pong, then two sessions.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("session")
    }
}
