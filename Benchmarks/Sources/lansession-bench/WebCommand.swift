import ArgumentParser

/// (root) A drag on one test host's page to the frame drawn on another's, in headless Chromium.
struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "(root) A drag on one test host's page to the frame drawn on another's, in headless Chromium.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("web")
    }
}
