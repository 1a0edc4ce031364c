import WireCodec

/// WireCodec's stream framing: a varint length, then the message body.
enum LanSessionCodec {
    static let name = "lansession"

    static func cases() -> [BenchCase] {
        [
            benchCase("move", .move(Fixtures.move)),
            benchCase("increment", .counterIncrement(count: UInt64(Fixtures.incrementDelta))),
            benchCase("hello", .hello(Fixtures.hello)),
        ]
    }

    static func benchCase(_ label: String, _ original: Message) -> BenchCase {
        let message = opaque(original)
        let frame: [UInt8]
        do {
            frame = try StreamFraming.encode(message)
            let decoded = try frame.withUnsafeBytes { raw throws(WireError) in try StreamFraming.decodeFrame(raw) }
            guard let decoded, decoded.length == frame.count else {
                fatalError("\(name) \(label): frame of \(frame.count) bytes did not decode as one frame")
            }
            verify(decoded.message, equals: original, name, label)
        } catch {
            fatalError("\(name) \(label): \(error)")
        }

        // Sixteen copies of the frame that differ in their last byte, used in turn, so that the optimizer cannot
        // hoist the inlined encode or decode out of the loop as loop-invariant work.
        let variants: [Message] = (0..<16).map { variant(of: message, $0) }
        var frames: [UInt8] = []
        for variant in variants { try! StreamFraming.encode(variant, into: &frames) }
        let stride = frame.count

        return BenchCase(
            codec: name, message: label, bytes: frame.count,
            encode: { iterations in
                // A reused output buffer, as a socket writer owns one (SwiftNIO's ByteBuffer hands out the same kind
                // of raw memory through writeWithUnsafeMutableBytes).
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
                defer { buffer.deallocate() }
                var sum: UInt64 = 0
                variants.withUnsafeBufferPointer { variants in
                    for iteration in 0..<iterations {
                        let written = try! StreamFraming.encode(variants[iteration & 15], into: buffer)
                        sum &+= UInt64(written) &+ UInt64(buffer[written - 1])
                    }
                }
                return sum
            },
            decode: { iterations in
                frames.withUnsafeBytes { raw in
                    var sum: UInt64 = 0
                    for iteration in 0..<iterations {
                        let start = (iteration & 15) * stride
                        let slice = UnsafeRawBufferPointer(rebasing: raw[start..<(start + stride)])
                        let (message, length) = try! StreamFraming.decodeFrame(slice)!
                        sum &+= checksum(message) &+ UInt64(length)
                    }
                    return sum
                }
            })
    }

    /// `message` with its last field changed by `index` (the move's sequence, the increment's count, the hello's
    /// capabilities), keeping its encoded size.
    static func variant(of message: Message, _ index: Int) -> Message {
        switch message {
        case .move(var move):
            move.sequence = UInt16(truncatingIfNeeded: Int(move.sequence) + index)
            return .move(move)
        case .counterIncrement(let count):
            return .counterIncrement(count: UInt64(1 + (Int(count) - 1 + index) % 127))
        case .hello(var hello):
            hello.capabilities = Capabilities(rawValue: UInt32(index))
            return .hello(hello)
        default:
            return message
        }
    }

    static func checksum(_ message: Message) -> UInt64 {
        switch message {
        case .move(let move): move.checksum
        case .counterIncrement(let count): count
        case .hello(let hello): hello.checksum
        default: 0
        }
    }
}
