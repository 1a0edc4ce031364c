/// Writes wire fields into memory whose size was computed beforehand by the matching `size` functions. Applications
/// write the bodies of their own kinds with it (``ApplicationMessage/init(kind:bodySize:write:)``).
public struct ByteWriter: ~Copyable {
    @usableFromInline let bytes: UnsafeMutableRawBufferPointer
    @usableFromInline var cursor: Int

    /// A writer at the start of `bytes`.
    @inlinable
    public init(_ bytes: UnsafeMutableRawBufferPointer) {
        self.bytes = bytes
        self.cursor = 0
    }

    /// Bytes written so far.
    @inlinable
    public var offset: Int { cursor }

    /// Bytes a value takes as an unsigned LEB128 varint.
    @inlinable @inline(__always)
    public static func varintSize(_ value: UInt64) -> Int {
        value < 0x80 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    @inlinable @inline(__always)
    public mutating func write(_ byte: UInt8) {
        precondition(cursor < bytes.count, "ByteWriter overflow")
        bytes[cursor] = byte
        cursor += 1
    }

    @inlinable @inline(__always)
    public mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            write(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        write(UInt8(value))
    }

    @inlinable @inline(__always)
    public mutating func writeUInt16LE(_ value: UInt16) {
        precondition(bytes.count - cursor >= 2, "ByteWriter overflow")
        bytes.storeBytes(of: value.littleEndian, toByteOffset: cursor, as: UInt16.self)
        cursor += 2
    }

    @inlinable @inline(__always)
    public mutating func writeUInt64LE(_ value: UInt64) {
        precondition(bytes.count - cursor >= 8, "ByteWriter overflow")
        bytes.storeBytes(of: value.littleEndian, toByteOffset: cursor, as: UInt64.self)
        cursor += 8
    }

    @inlinable @inline(__always)
    public mutating func writeFloat(_ value: Float) {
        precondition(bytes.count - cursor >= 4, "ByteWriter overflow")
        bytes.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: cursor, as: UInt32.self)
        cursor += 4
    }

    @inlinable
    public mutating func writeBytes(_ value: some Collection<UInt8>) {
        writeVarint(UInt64(value.count))
        precondition(bytes.count - cursor >= value.count, "ByteWriter overflow")
        for byte in value {
            bytes[cursor] = byte
            cursor += 1
        }
    }

    /// Writes a length-prefixed array with one copy (payloads of data and chunks are large).
    @inlinable
    public mutating func writeBytes(_ value: [UInt8]) {
        writeVarint(UInt64(value.count))
        writeRaw(value)
    }

    /// Writes an array with no length prefix, with one copy.
    @inlinable
    public mutating func writeRaw(_ value: [UInt8]) {
        precondition(bytes.count - cursor >= value.count, "ByteWriter overflow")
        value.withUnsafeBytes { source in
            guard let base = source.baseAddress else { return }
            (bytes.baseAddress! + cursor).copyMemory(from: base, byteCount: source.count)
        }
        cursor += value.count
    }

    /// Writes borrowed bytes with no length prefix, with one copy.
    @inlinable
    public mutating func writeRaw(_ value: UnsafeRawBufferPointer) {
        precondition(bytes.count - cursor >= value.count, "ByteWriter overflow")
        if let base = value.baseAddress { (bytes.baseAddress! + cursor).copyMemory(from: base, byteCount: value.count) }
        cursor += value.count
    }

    /// Writes `value` with no length prefix.
    @inlinable
    public mutating func writeRaw(_ value: some Collection<UInt8>) {
        precondition(bytes.count - cursor >= value.count, "ByteWriter overflow")
        for byte in value {
            bytes[cursor] = byte
            cursor += 1
        }
    }

    @inlinable
    public mutating func writeString(_ value: String) {
        writeBytes(value.utf8)
    }
}
