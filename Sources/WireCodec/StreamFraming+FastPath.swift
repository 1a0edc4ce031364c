/// Fixed-layout fast paths for the commands sent many times a second: `move` and small `counterIncrement`s.
///
/// They produce and accept exactly the bytes of the general path (the tests and the fuzz target compare both); they
/// only skip the generic size computation and dispatch. Anything else, including every malformed input, goes to the
/// general path, which also produces the errors.
extension StreamFraming {
    /// Frame length of a `move`: header 1, kind 1, view 1, x 4, y 4, sequence 2.
    @usableFromInline static let moveFrameLength = 13

    /// Writes a `move` or an increment below 128 at the start of `destination`; nil for any other message.
    @inlinable @inline(__always)
    static func encodeFast(
        _ message: Message, into destination: UnsafeMutableRawBufferPointer, limits: WireLimits
    ) -> Int? {
        switch message {
        case .move(let move):
            guard move.x.isFinite, move.y.isFinite, limits.maxFrameLength >= 12,
                destination.count >= moveFrameLength
            else { return nil }
            destination.storeBytes(of: 12, toByteOffset: 0, as: UInt8.self)
            destination.storeBytes(of: MessageKind.move.rawValue, toByteOffset: 1, as: UInt8.self)
            destination.storeBytes(of: move.view, toByteOffset: 2, as: UInt8.self)
            destination.storeBytes(of: move.x.bitPattern.littleEndian, toByteOffset: 3, as: UInt32.self)
            destination.storeBytes(of: move.y.bitPattern.littleEndian, toByteOffset: 7, as: UInt32.self)
            destination.storeBytes(of: move.sequence.littleEndian, toByteOffset: 11, as: UInt16.self)
            return moveFrameLength
        case .counterIncrement(let delta):
            guard delta >= Wire.minIncrementDelta, delta < 0x80, limits.maxFrameLength >= 2, destination.count >= 3
            else { return nil }
            destination.storeBytes(of: 2, toByteOffset: 0, as: UInt8.self)
            destination.storeBytes(of: MessageKind.counterIncrement.rawValue, toByteOffset: 1, as: UInt8.self)
            destination.storeBytes(of: UInt8(delta), toByteOffset: 2, as: UInt8.self)
            return 3
        default:
            return nil
        }
    }

    /// Decodes a well-formed `move` or one-byte increment frame at the start of `bytes`; nil for anything else.
    @inlinable @inline(__always)
    static func decodeFast(_ bytes: UnsafeRawBufferPointer, limits: WireLimits) -> (message: Message, length: Int)? {
        guard bytes.count >= 3 else { return nil }
        let header = bytes[0]
        let kind = bytes[1]
        if header == 12, kind == MessageKind.move.rawValue, bytes.count >= moveFrameLength, limits.maxFrameLength >= 12
        {
            let x = Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 3, as: UInt32.self)))
            let y = Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 7, as: UInt32.self)))
            guard x.isFinite, y.isFinite else { return nil }
            let sequence = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 11, as: UInt16.self))
            return (.move(Move(view: bytes[2], x: x, y: y, sequence: sequence)), moveFrameLength)
        }
        if header == 2, kind == MessageKind.counterIncrement.rawValue, limits.maxFrameLength >= 2 {
            let delta = bytes[2]
            guard delta >= 1, delta < 0x80 else { return nil }
            return (.counterIncrement(delta: UInt16(delta)), 3)
        }
        return nil
    }
}
