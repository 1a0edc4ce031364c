import BubblesAndCounter
import WireCodec

/// WireCodec's stream framing: a varint length, then the message body; the apps' messages read and written by
/// BubblesAndCounter, as a session's applications do.
enum LanSessionCodec {
    static let name = "lansession"

    /// What one case encodes: a message of the apps' (kinds 0x20–0x29, whose bodies WireCodec carries unread) or of
    /// the session's own.
    enum Value: Equatable {
        case apps(BubblesAndCounterMessage)
        case session(Message)

        /// The message as WireCodec frames it; the apps' encoded by BubblesAndCounter.
        @inline(__always)
        func message() throws(WireError) -> Message {
            switch self {
            case .apps(let message): try message.message()
            case .session(let message): message
            }
        }

        /// Reads a decoded message: the apps' body by BubblesAndCounter.
        @inline(__always)
        init(_ message: Message) throws(WireError) {
            if let apps = try BubblesAndCounterMessage(message) {
                self = .apps(apps)
            } else {
                self = .session(message)
            }
        }
    }

    static func cases() -> [BenchCase] {
        [
            benchCase("move", .apps(.move(Fixtures.move))),
            benchCase("increment", .apps(.counterIncrement(count: UInt64(Fixtures.incrementDelta)))),
            benchCase("hello", .session(.hello(Fixtures.hello))),
        ]
    }

    static func benchCase(_ label: String, _ original: Value) -> BenchCase {
        let value = opaque(original)
        let frame: [UInt8]
        do {
            frame = try StreamFraming.encode(try value.message())
            let decoded = try frame.withUnsafeBytes { raw throws(WireError) in try StreamFraming.decodeFrame(raw) }
            guard let decoded, decoded.length == frame.count else {
                fatalError("\(name) \(label): frame of \(frame.count) bytes did not decode as one frame")
            }
            verify(try Value(decoded.message), equals: original, name, label)
        } catch {
            fatalError("\(name) \(label): \(error)")
        }

        // Sixteen copies of the frame that differ in their last byte, used in turn, so that the optimizer cannot
        // hoist the inlined encode or decode out of the loop as loop-invariant work.
        let variants: [Value] = (0..<16).map { variant(of: value, $0) }
        var frames: [UInt8] = []
        for variant in variants { try! StreamFraming.encode(try! variant.message(), into: &frames) }
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
                        let message = try! variants[iteration & 15].message()
                        let written = try! StreamFraming.encode(message, into: buffer)
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
                        sum &+= checksum(try! Value(message)) &+ UInt64(length)
                    }
                    return sum
                }
            })
    }

    /// `value` with its last field changed by `index` (the move's sequence, the increment's count, the hello's
    /// capabilities), keeping its encoded size.
    static func variant(of value: Value, _ index: Int) -> Value {
        switch value {
        case .apps(.move(var move)):
            move.sequence = UInt16(truncatingIfNeeded: Int(move.sequence) + index)
            return .apps(.move(move))
        case .apps(.counterIncrement(let count)):
            return .apps(.counterIncrement(count: UInt64(1 + (Int(count) - 1 + index) % 127)))
        case .session(.hello(var hello)):
            hello.capabilities = Capabilities(rawValue: UInt32(index))
            return .session(.hello(hello))
        default:
            return value
        }
    }

    static func checksum(_ value: Value) -> UInt64 {
        switch value {
        case .apps(.move(let move)): move.checksum
        case .apps(.counterIncrement(let count)): count
        case .session(.hello(let hello)): hello.checksum
        default: 0
        }
    }
}
