import ArgumentParser

/// A file sent between two sessions on 127.0.0.1 next to a raw TCP copy.
struct TransferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer",
        abstract: "A file sent between two sessions on 127.0.0.1 next to a raw TCP copy.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("transfer")
    }
}
