import Foundation

/// Measured numbers for one codec and one message.
struct BenchResult {
    let codec: String
    let message: String
    let bytes: Int
    let encodeNanoseconds: Double
    let decodeNanoseconds: Double

    var totalNanoseconds: Double { encodeNanoseconds + decodeNanoseconds }
}

/// Formats nanoseconds with two decimals below 100 and one above.
func formatNanoseconds(_ value: Double) -> String {
    String(format: value < 100 ? "%.2f" : "%.1f", value)
}

/// WireCodec's encoded size and encode/decode time next to protobuf, JSON, binary property lists and
/// NSKeyedArchiver: a table, or with `json` one JSON object per line and nothing else on stdout.
public enum CodecBench {
    /// The codecs `run(json:codec:)` knows, by name.
    public static let codecNames = [
        LanSessionCodec.name, ProtobufCodec.name, JSONCodec.name, PropertyListCodec.name, KeyedArchiverCodec.name,
    ]

    /// Measures every case (of `codec` only, when given) and prints the rows.
    public static func run(json jsonOutput: Bool, codec onlyCodec: String?) {
        let cases =
            LanSessionCodec.cases() + ProtobufCodec.cases() + JSONCodec.cases() + PropertyListCodec.cases()
            + KeyedArchiverCodec.cases()

        var results: [BenchResult] = []
        for benchCase in cases where onlyCodec == nil || benchCase.codec == onlyCodec {
            let encode = Timing.nanosecondsPerOperation(benchCase.encode)
            let decode = Timing.nanosecondsPerOperation(benchCase.decode)
            let result = BenchResult(
                codec: benchCase.codec, message: benchCase.message, bytes: benchCase.bytes, encodeNanoseconds: encode,
                decodeNanoseconds: decode)
            results.append(result)
            if jsonOutput {
                // Unbuffered, so that each line shows up as soon as its case is measured.
                let json =
                    "{\"metric\": \"codec_ns\", \"codec\": \"\(result.codec)\", \"message\": \"\(result.message)\", \"bytes\": \(result.bytes), "
                    + "\"encode_ns\": \(formatNanoseconds(encode)), \"decode_ns\": \(formatNanoseconds(decode))}\n"
                FileHandle.standardOutput.write(Data(json.utf8))
            }
        }

        if !jsonOutput {
            let header = ["codec", "message", "bytes", "encode ns", "decode ns", "total ns"]
            let rows = results.map {
                [
                    $0.codec, $0.message, String($0.bytes), formatNanoseconds($0.encodeNanoseconds),
                    formatNanoseconds($0.decodeNanoseconds), formatNanoseconds($0.totalNanoseconds),
                ]
            }
            let widths = header.indices.map { column in
                ([header] + rows).map { $0[column].count }.max() ?? 0
            }
            func line(_ cells: [String]) -> String {
                cells.indices.map { column in
                    let padding = String(repeating: " ", count: widths[column] - cells[column].count)
                    // Names are left-aligned, numbers right-aligned.
                    return column < 2 ? cells[column] + padding : padding + cells[column]
                }.joined(separator: "  ")
            }
            print(line(header))
            print(String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1)))
            for row in rows {
                print(line(row))
            }

            let lanSession = results.first { $0.codec == LanSessionCodec.name && $0.message == "move" }
            let protobuf = results.first { $0.codec == ProtobufCodec.name && $0.message == "move" }
            if let lanSession, let protobuf {
                let factor = String(format: "%.1f", protobuf.totalNanoseconds / lanSession.totalNanoseconds)
                let ours = formatNanoseconds(lanSession.totalNanoseconds)
                let theirs = formatNanoseconds(protobuf.totalNanoseconds)
                print(
                    "\nlansession move is \(factor)× faster than protobuf (encode + decode: \(ours) ns vs \(theirs) ns)"
                )
            }
        }

        FileHandle.standardError.write(Data("bench codec: checksum \(String(benchmarkSink, radix: 16))\n".utf8))
    }
}
