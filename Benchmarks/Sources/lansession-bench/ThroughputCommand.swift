import ArgumentParser
import ThroughputBenchmark
import TransferBenchmark

/// Over one reliable link between two sessions on 127.0.0.1: counter increments and data messages per second next to
/// plain SwiftNIO TCP (and TLS 1.3 for sealed messages); then a file (the transfer rows, 100 MB).
struct ThroughputCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "throughput",
        abstract: "Increments and messages per second over one reliable link, next to SwiftNIO TCP and TLS.")

    @OptionGroup var output: OutputOptions

    @Option(help: "Counter increments per row (1...9999999).")
    var increments = 300_000

    @Option(help: "Data messages of 1 KiB per row (1...9999999; a sixteenth of it of the largest size).")
    var messages = 200_000

    @Option(
        help: ArgumentHelp(
            "Only these rows, comma-separated (no file rows): \(ThroughputBench.rowKeys.joined(separator: ", ")).",
            visibility: .hidden))
    var only: String?

    @Flag(help: ArgumentHelp("No baselines (for counting the session's own allocations).", visibility: .hidden))
    var noBaseline = false

    private var onlyRows: Set<String>? { only.map { Set($0.split(separator: ",").map(String.init)) } }

    func validate() throws {
        for (name, value) in [("--increments", increments), ("--messages", messages)]
        where !(1...9_999_999).contains(value) {
            throw ValidationError("\(name) needs a whole number 1...9999999")
        }
        if let onlyRows, onlyRows.isEmpty || !onlyRows.isSubset(of: ThroughputBench.rowKeys) {
            throw ValidationError("--only needs rows of \(ThroughputBench.rowKeys.joined(separator: ", "))")
        }
    }

    func run() async throws {
        try await ThroughputBench.run(
            .init(
                json: output.json, increments: increments, messages: messages, only: onlyRows, noBaseline: noBaseline))
        guard onlyRows == nil else { return }
        // Messages first, then files: the file rows are the transfer benchmark's (100 MB).
        output.text("")
        try await TransferBench.run(json: output.json, megabytes: 100)
    }
}
