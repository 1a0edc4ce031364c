/// Writes wire fields into memory whose size was computed beforehand by the matching `size` functions.
@usableFromInline
struct ByteWriter: ~Copyable {
    @usableFromInline let bytes: UnsafeMutableRawBufferPointer
    @usableFromInline var offset: Int

    @inlinable
    init(_ bytes: UnsafeMutableRawBufferPointer) {
        self.bytes = bytes
        self.offset = 0
    }

    /// Bytes a value takes as an unsigned LEB128 varint.
    @inlinable @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        value < 0x80 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    @inlinable @inline(__always)
    mutating func write(_ byte: UInt8) {
        precondition(offset < bytes.count, "ByteWriter overflow")
        bytes[offset] = byte
        offset += 1
    }

    @inlinable @inline(__always)
    mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            write(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        write(UInt8(value))
    }

    @inlinable @inline(__always)
    mutating func writeUInt16LE(_ value: UInt16) {
        precondition(bytes.count - offset >= 2, "ByteWriter overflow")
        bytes.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt16.self)
        offset += 2
    }

    @inlinable @inline(__always)
    mutating func writeUInt64LE(_ value: UInt64) {
        precondition(bytes.count - offset >= 8, "ByteWriter overflow")
        bytes.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
        offset += 8
    }

    @inlinable @inline(__always)
    mutating func writeFloat(_ value: Float) {
        precondition(bytes.count - offset >= 4, "ByteWriter overflow")
        bytes.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: offset, as: UInt32.self)
        offset += 4
    }

    @inlinable
    mutating func writeBytes(_ value: some Collection<UInt8>) {
        writeVarint(UInt64(value.count))
        precondition(bytes.count - offset >= value.count, "ByteWriter overflow")
        for byte in value {
            bytes[offset] = byte
            offset += 1
        }
    }

    /// Writes a length-prefixed array with one copy (payloads of data and chunks are large).
    @inlinable
    mutating func writeBytes(_ value: [UInt8]) {
        writeVarint(UInt64(value.count))
        writeRaw(value)
    }

    /// Writes an array with no length prefix, with one copy.
    @inlinable
    mutating func writeRaw(_ value: [UInt8]) {
        precondition(bytes.count - offset >= value.count, "ByteWriter overflow")
        value.withUnsafeBytes { source in
            guard let base = source.baseAddress else { return }
            (bytes.baseAddress! + offset).copyMemory(from: base, byteCount: source.count)
        }
        offset += value.count
    }

    /// Writes `value` with no length prefix.
    @inlinable
    mutating func writeRaw(_ value: some Collection<UInt8>) {
        precondition(bytes.count - offset >= value.count, "ByteWriter overflow")
        for byte in value {
            bytes[offset] = byte
            offset += 1
        }
    }

    @inlinable
    mutating func writeString(_ value: String) {
        writeBytes(value.utf8)
    }
}
