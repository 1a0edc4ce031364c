import ArgumentParser
import TransferBenchmark

/// A file sent between two sessions on 127.0.0.1 (insecure, then sealed) next to a raw TCP copy of the same file, with
/// the round trip of a reliable ping idle and during the transfer.
struct TransferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer",
        abstract: "A file sent between two sessions on 127.0.0.1 next to a raw TCP copy.")

    @OptionGroup var output: OutputOptions

    @Option(help: "The file's size in MB (1...4096).")
    var megabytes = 200

    func validate() throws {
        guard (1...4096).contains(megabytes) else { throw ValidationError("--megabytes needs 1...4096") }
    }

    func run() async throws {
        try await TransferBench.run(json: output.json, megabytes: megabytes)
    }
}
