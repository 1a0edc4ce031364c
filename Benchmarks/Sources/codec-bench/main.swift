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

let usage = "usage: codec-bench [--json] [--codec NAME]"

var jsonOutput = false
var onlyCodec: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--json":
        jsonOutput = true
    case "--codec":
        guard let name = arguments.popFirst() else {
            FileHandle.standardError.write(Data("codec-bench: --codec needs a name; \(usage)\n".utf8))
            exit(2)
        }
        onlyCodec = name
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        FileHandle.standardError.write(Data("codec-bench: unknown argument '\(argument)'; \(usage)\n".utf8))
        exit(2)
    }
}

/// Formats nanoseconds with two decimals below 100 and one above.
func formatNanoseconds(_ value: Double) -> String {
    String(format: value < 100 ? "%.2f" : "%.1f", value)
}

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
        print("\nlansession move is \(factor)× faster than protobuf (encode + decode: \(ours) ns vs \(theirs) ns)")
    }
}

FileHandle.standardError.write(Data("codec-bench: checksum \(String(benchmarkSink, radix: 16))\n".utf8))
