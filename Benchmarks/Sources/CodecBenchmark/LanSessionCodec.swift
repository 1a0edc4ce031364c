import BubblesAndCounter
import WireCodec

/// WireCodec's stream framing: a varint length, then the message body. The apps' messages (kinds 0x20–0x29, which
/// WireCodec frames without knowing them) are written into the frame and read from it by BubblesAndCounter's
/// fields, with no intermediate message; the session's own by WireCodec.
enum LanSessionCodec {
    static let name = "lansession"

    static func cases() -> [BenchCase] {
        [
            appsCase("move", .move(Fixtures.move)),
            appsCase("increment", .counterIncrement(count: UInt64(Fixtures.incrementDelta))),
            sessionCase("hello", .hello(Fixtures.hello)),
        ]
    }

    /// A message of the apps', encoded to a frame and decoded back to the apps' message (any other frame would come
    /// back as the session's message).
    static func appsCase(_ label: String, _ original: BubblesAndCounterMessage) -> BenchCase {
        let message = opaque(original)
        let frame: [UInt8]
        do {
            frame = try message.frame()
            // The bytes a session's application sends, carried as an application message.
            verify(frame, equals: try StreamFraming.encode(try message.message()), name, label)
            let decoded = try frame.withUnsafeBytes { raw throws(WireError) in
                try BubblesAndCounterMessage.decodeFrame(raw)
            }
            guard let decoded, decoded.length == frame.count else {
                fatalError("\(name) \(label): frame of \(frame.count) bytes did not decode as one frame")
            }
            verify(decoded.frame, equals: .command(original), name, label)
        } catch {
            fatalError("\(name) \(label): \(error)")
        }
        let variants: [BubblesAndCounterMessage] = (0..<16).map { variant(of: message, $0) }
        var frames: [UInt8] = []
        for variant in variants { try! variant.encodeFrame(into: &frames) }

        return BenchCase(
            codec: name, message: label, bytes: frame.count,
            encode: { iterations in
                withOutputBuffer { buffer in
                    variants.withUnsafeBufferPointer { variants in
                        var sum: UInt64 = 0
                        for iteration in 0..<iterations {
                            let written = try! variants[iteration & 15].encodeFrame(into: buffer)
                            sum &+= UInt64(written) &+ UInt64(buffer[written - 1])
                        }
                        return sum
                    }
                }
            },
            decode: { iterations in
                decodeLoop(frames, stride: frame.count, iterations) { slice in
                    let (frame, length) = try! BubblesAndCounterMessage.decodeFrame(slice)!
                    return checksum(frame) &+ UInt64(length)
                }
            })
    }

    /// A message of the session's own, encoded to a frame and decoded back.
    static func sessionCase(_ label: String, _ original: Message) -> BenchCase {
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
        let variants: [Message] = (0..<16).map { variant(of: message, $0) }
        var frames: [UInt8] = []
        for variant in variants { try! StreamFraming.encode(variant, into: &frames) }

        return BenchCase(
            codec: name, message: label, bytes: frame.count,
            encode: { iterations in
                withOutputBuffer { buffer in
                    variants.withUnsafeBufferPointer { variants in
                        var sum: UInt64 = 0
                        for iteration in 0..<iterations {
                            let written = try! StreamFraming.encode(variants[iteration & 15], into: buffer)
                            sum &+= UInt64(written) &+ UInt64(buffer[written - 1])
                        }
                        return sum
                    }
                }
            },
            decode: { iterations in
                decodeLoop(frames, stride: frame.count, iterations) { slice in
                    let (message, length) = try! StreamFraming.decodeFrame(slice)!
                    return checksum(message) &+ UInt64(length)
                }
            })
    }

    /// Calls `body` with a reused output buffer, as a socket writer owns one (SwiftNIO's ByteBuffer hands out the same
    /// kind of raw memory through writeWithUnsafeMutableBytes). The encode loops write sixteen variants in turn, which
    /// differ in their last byte, so that the optimizer cannot hoist the inlined encode out of the loop as
    /// loop-invariant work.
    @inline(__always)
    static func withOutputBuffer(_ body: (UnsafeMutableRawBufferPointer) -> UInt64) -> UInt64 {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
        defer { buffer.deallocate() }
        return body(buffer)
    }

    /// Decodes the sixteen frames of `stride` bytes in `frames` in turn, `iterations` times in all, each to a checksum.
    @inline(__always)
    static func decodeLoop(
        _ frames: [UInt8], stride: Int, _ iterations: Int, _ decode: (UnsafeRawBufferPointer) -> UInt64
    ) -> UInt64 {
        frames.withUnsafeBytes { raw in
            var sum: UInt64 = 0
            for iteration in 0..<iterations {
                let start = (iteration & 15) * stride
                sum &+= decode(UnsafeRawBufferPointer(rebasing: raw[start..<(start + stride)]))
            }
            return sum
        }
    }

    /// `message` with its last field changed by `index` (the move's sequence, the increment's count), keeping its
    /// encoded size.
    static func variant(of message: BubblesAndCounterMessage, _ index: Int) -> BubblesAndCounterMessage {
        switch message {
        case .move(var move):
            move.sequence = UInt16(truncatingIfNeeded: Int(move.sequence) + index)
            return .move(move)
        case .counterIncrement(let count):
            return .counterIncrement(count: UInt64(1 + (Int(count) - 1 + index) % 127))
        default:
            return message
        }
    }

    /// `message` with its last field changed by `index` (the hello's capabilities), keeping its encoded size.
    static func variant(of message: Message, _ index: Int) -> Message {
        guard case .hello(var hello) = message else { return message }
        hello.capabilities = Capabilities(rawValue: UInt32(index))
        return .hello(hello)
    }

    static func checksum(_ frame: ApplicationFrame<BubblesAndCounterMessage>) -> UInt64 {
        switch frame {
        case .command(.move(let move)): move.checksum
        case .command(.counterIncrement(let count)): count
        default: 0
        }
    }

    static func checksum(_ message: Message) -> UInt64 {
        guard case .hello(let hello) = message else { return 0 }
        return hello.checksum
    }
}
