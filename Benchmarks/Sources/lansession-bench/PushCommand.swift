import ArgumentParser

/// (root) A file pushed between two release sessiond on test hosts, beside iperf3, a raw copy and scp.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "(root) A file pushed between two release sessiond on test hosts, beside iperf3, a raw copy and scp.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("push")
    }
}
