/// One codec and one message: the encoded size and the loops that encode and decode it.
struct BenchCase {
    /// Codec name, as printed.
    let codec: String
    /// Message name, as printed.
    let message: String
    /// Encoded size in bytes, including any framing the codec needs.
    let bytes: Int
    /// Encodes the message as many times as it is told and returns a checksum of what it produced.
    let encode: (Int) -> UInt64
    /// Decodes the encoded bytes as many times as it is told and returns a checksum of the decoded fields.
    let decode: (Int) -> UInt64
}

/// Stops the benchmark when a codec does not reproduce its input.
func verify<T: Equatable>(_ decoded: T, equals expected: T, _ codec: String, _ message: String) {
    guard decoded == expected else {
        fatalError("\(codec) \(message): decoded \(decoded), expected \(expected)")
    }
}

/// A value whose fields can be folded into a checksum, so decoding cannot be optimized away.
protocol Checksummed {
    /// A cheap combination of every field.
    var checksum: UInt64 { get }
}

extension String {
    /// A cheap stand-in for the string's contents: its length and first byte.
    var checksum: UInt64 {
        UInt64(utf8.count) &+ UInt64(utf8.first ?? 0)
    }
}
