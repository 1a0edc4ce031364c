import ArgumentParser

/// WireCodec's encoded size and speed next to protobuf, JSON, plists and NSKeyedArchiver.
struct CodecCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "WireCodec's encoded size and speed next to protobuf, JSON, plists and NSKeyedArchiver.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        throw BenchFailure.notYet("codec")
    }
}
