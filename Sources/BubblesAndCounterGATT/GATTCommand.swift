import BubblesAndCounter
import LanSessionLE
import WireCodec

/// What a central asks of the original apps by writing the command characteristic of the LE GATT face
/// (docs/wire-format.md 4.2): the value written is one framed message of the apps, a `pickUp`, `move`, `drop` or
/// `counterIncrement`.
public enum GATTCommand: Hashable, Sendable {
    /// Pick up a bubble (`pickUp`, kind 0x24).
    case pickUp(view: UInt8)
    /// Move the bubble the device holds (`move`, kind 0x25). The message's move sequence is not kept: the writes of
    /// one central arrive in order.
    case move(view: UInt8, x: Float, y: Float)
    /// Drop the bubble the device holds (`drop`, kind 0x26).
    case drop(view: UInt8, x: Float, y: Float)
    /// Increment the device's counter `count` times (`counterIncrement`, kind 0x27). On this face its count is a
    /// number of increments, 1 to ``maxIncrements``, not a total as between peers.
    case increment(count: UInt64)

    /// The most increments one write may ask for (`gattMaxIncrements`).
    public static let maxIncrements: UInt64 = 1000

    /// Why a written value is not a command.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The codec's error, when the bytes are not one valid framed message.
        public var wireError: WireError?
        /// What was wrong.
        public var reason: String

        /// Creates an error.
        public init(wireError: WireError? = nil, _ reason: String) {
            self.wireError = wireError
            self.reason = reason
        }

        public var description: String { reason }
    }

    /// Decodes a written value: exactly one framed message (a varint body length, then the body) of one of the four
    /// kinds, nothing before or after it.
    public init(frame: [UInt8]) throws(DecodingError) {
        // Read straight from the written bytes into the apps' message: no intermediate message.
        let result = frame.withUnsafeBytes { bytes in
            Result { () throws(WireError) in try BubblesAndCounterMessage.decodeFrame(bytes) }
        }
        let decoded: (frame: ApplicationFrame<BubblesAndCounterMessage>, length: Int)?
        switch result {
        case .success(let frame): decoded = frame
        case .failure(let error): throw DecodingError(wireError: error, "not a framed message: \(error)")
        }
        guard let (decodedFrame, length) = decoded else {
            throw DecodingError(
                wireError: WireError(.truncated, offset: frame.count), "a frame cut short (\(frame.count) bytes)")
        }
        guard length == frame.count else {
            throw DecodingError("\(frame.count - length) bytes after the frame: a write carries one message")
        }
        let command: BubblesAndCounterMessage
        switch decodedFrame {
        case .command(let message): command = message
        case .other(let message): throw DecodingError("a \(message.kind) is not a command a central may write")
        }
        switch command {
        case .pickUp(let view): self = .pickUp(view: view)
        case .move(let move): self = .move(view: move.view, x: move.x, y: move.y)
        case .drop(let drop): self = .drop(view: drop.view, x: drop.x, y: drop.y)
        case .counterIncrement(let count):
            guard count <= Self.maxIncrements else {
                throw DecodingError("\(count) increments in one write, at most \(Self.maxIncrements)")
            }
            self = .increment(count: count)
        case let other:
            throw DecodingError("a \(other.kind) is not a command a central may write")
        }
    }

    /// What a GATT face hands each written value to: it is decoded here, and each command goes to `take` (at once,
    /// where the face runs: `take` must not block); a value that is no command is refused, which the face tells the
    /// central (the application error 0x80).
    public static func taker(_ take: @escaping @Sendable (GATTCommand) -> Void) -> GATTCommandTaker {
        { value throws(GATTNotACommand) in
            do throws(DecodingError) {
                take(try GATTCommand(frame: value))
            } catch {
                throw GATTNotACommand(error.reason)
            }
        }
    }
}
