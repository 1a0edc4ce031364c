import ArgumentParser

/// (root) N test hosts, a sessiond each, started at once: time until all are connected to all.
struct MeshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mesh",
        abstract: "(root) N test hosts, a sessiond each, started at once: time until all are connected to all.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("mesh")
    }
}
