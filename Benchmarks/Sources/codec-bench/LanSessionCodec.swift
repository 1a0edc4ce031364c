import WireCodec

/// WireCodec's stream framing: a varint length, then the message body.
enum LanSessionCodec {
    static let name = "lansession"

    static func cases() -> [BenchCase] {
        [
            benchCase("move", .move(Fixtures.move)),
            benchCase("increment", .counterIncrement(delta: Fixtures.incrementDelta)),
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

        return BenchCase(
            codec: name, message: label, bytes: frame.count,
            encode: { iterations in
                // A reused output buffer, as a socket writer owns one (SwiftNIO's ByteBuffer hands out the same kind
                // of raw memory through writeWithUnsafeMutableBytes).
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
                defer { buffer.deallocate() }
                var sum: UInt64 = 0
                for _ in 0..<iterations {
                    let written = try! StreamFraming.encode(message, into: buffer)
                    sum &+= UInt64(written) &+ UInt64(buffer[written - 1])
                }
                return sum
            },
            decode: { iterations in
                frame.withUnsafeBytes { raw in
                    var sum: UInt64 = 0
                    for _ in 0..<iterations {
                        let (message, length) = try! StreamFraming.decodeFrame(raw)!
                        sum &+= checksum(message) &+ UInt64(length)
                    }
                    return sum
                }
            })
    }

    static func checksum(_ message: Message) -> UInt64 {
        switch message {
        case .move(let move): move.checksum
        case .counterIncrement(let delta): UInt64(delta)
        case .hello(let hello): hello.checksum
        default: 0
        }
    }
}
