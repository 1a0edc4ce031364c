import ArgumentParser

/// (root) Round trips between two test hosts: sockperf, ENet and two release sessiond.
struct NetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "net",
        abstract: "(root) Round trips between two test hosts: sockperf, ENet and two release sessiond.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("net")
    }
}
