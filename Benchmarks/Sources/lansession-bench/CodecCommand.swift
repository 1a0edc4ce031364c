import ArgumentParser
import CodecBenchmark

/// WireCodec's encoded size and encode/decode time next to protobuf, JSON, binary property lists and NSKeyedArchiver.
struct CodecCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "WireCodec's encoded size and speed next to protobuf, JSON, plists and NSKeyedArchiver.")

    @OptionGroup var output: OutputOptions

    @Option(help: "Only this codec: \(CodecBench.codecNames.joined(separator: ", ")).")
    var codec: String?

    func validate() throws {
        if let codec, !CodecBench.codecNames.contains(codec) {
            throw ValidationError(
                "--codec needs one of \(CodecBench.codecNames.joined(separator: ", ")), not '\(codec)'")
        }
    }

    func run() async throws {
        CodecBench.run(json: output.json, codec: codec)
    }
}
