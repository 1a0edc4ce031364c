import ArgumentParser

/// What open pages cost a release sessiond on 127.0.0.1.
struct PagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pages",
        abstract: "What open pages cost a release sessiond on 127.0.0.1.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("pages")
    }
}
