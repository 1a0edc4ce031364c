/// Fixed-layout fast paths for the commands sent many times a second: `move`, and `counterIncrement`s whose count
/// fits a one- or two-byte varint (below 16384).
///
/// They produce and accept exactly the bytes of the general path (the tests and the fuzz target compare both); they
/// only skip the generic size computation and dispatch. Anything else, including every malformed input, goes to the
/// general path, which also produces the errors.
extension StreamFraming {
    /// Frame length of a `move`: header 1, kind 1, view 1, x 4, y 4, sequence 2.
    @usableFromInline static let moveFrameLength = 13

    /// Writes a `move` or an increment with a count below 16384 at the start of `destination`; nil for any other
    /// message.
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
        case .counterIncrement(let count):
            guard count >= Wire.minIncrementCount, count < 0x4000, limits.maxFrameLength >= 3, destination.count >= 4
            else { return nil }
            destination.storeBytes(of: MessageKind.counterIncrement.rawValue, toByteOffset: 1, as: UInt8.self)
            if count < 0x80 {
                destination.storeBytes(of: 2, toByteOffset: 0, as: UInt8.self)
                destination.storeBytes(of: UInt8(count), toByteOffset: 2, as: UInt8.self)
                return 3
            }
            destination.storeBytes(of: 3, toByteOffset: 0, as: UInt8.self)
            destination.storeBytes(of: UInt8(truncatingIfNeeded: count) | 0x80, toByteOffset: 2, as: UInt8.self)
            destination.storeBytes(of: UInt8(truncatingIfNeeded: count >> 7), toByteOffset: 3, as: UInt8.self)
            return 4
        default:
            return nil
        }
    }

    /// Decodes a well-formed `move` or an increment frame with a one- or two-byte count at the start of `bytes`; nil
    /// for anything else.
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
        guard kind == MessageKind.counterIncrement.rawValue else { return nil }
        if header == 2, limits.maxFrameLength >= 2 {
            let count = bytes[2]
            guard count >= 1, count < 0x80 else { return nil }
            return (.counterIncrement(count: UInt64(count)), 3)
        }
        if header == 3, bytes.count >= 4, limits.maxFrameLength >= 3 {
            let low = bytes[2]
            let high = bytes[3]
            // Shortest form only: the second byte is the last (high bit clear) and not zero.
            guard low & 0x80 != 0, high != 0, high < 0x80 else { return nil }
            return (.counterIncrement(count: UInt64(low & 0x7F) | UInt64(high) << 7), 4)
        }
        return nil
    }
}
