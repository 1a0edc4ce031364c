import ArgumentParser

/// (root) A sessiond started next to a running one on test hosts: time to connected.
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "(root) A sessiond started next to a running one on test hosts: time to connected.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("join")
    }
}
