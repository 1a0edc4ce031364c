import ArgumentParser

/// (root) Every benchmark that runs on test hosts, in one run, and a table of the main figures.
struct AllCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all",
        abstract: "(root) Every benchmark that runs on test hosts, in one run, and a table of the main figures.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("all")
    }
}
