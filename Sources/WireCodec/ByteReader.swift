/// Reads wire fields from a borrowed byte range, checking every bound.
///
/// Never traps and never allocates, except for the string and bytes fields it returns, whose size is checked against
/// their limit before anything is allocated. Applications read the bodies of their own kinds with it
/// (``ApplicationMessage/read(_:)``). Each read names its field, for the error it may throw.
public struct ByteReader: ~Copyable {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline var cursor: Int

    /// A reader at the start of `bytes`.
    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.cursor = 0
    }

    /// Where the next field starts, in bytes from the start.
    @inlinable
    public var offset: Int { cursor }
    /// Whether every byte was read.
    @inlinable
    public var isAtEnd: Bool { cursor == bytes.count }
    /// The bytes not read yet.
    @inlinable
    public var remaining: Int { bytes.count - cursor }

    /// An error at `offset` (by default where the next field starts).
    @inlinable
    public func error(_ code: WireError.Code, _ detail: String, at offset: Int? = nil) -> WireError {
        WireError(code, offset: offset ?? cursor, detail: detail)
    }

    @inlinable @inline(__always)
    public mutating func readByte(_ field: StaticString) throws(WireError) -> UInt8 {
        guard cursor < bytes.count else { throw error(.truncated, "\(field)") }
        let value = bytes[cursor]
        cursor += 1
        return value
    }

    /// Reads an unsigned LEB128 varint of at most `maxBytes` bytes whose value is at most `max`.
    ///
    /// Rejects encodings that are not the shortest (a last byte of zero after the first) and values that need more
    /// bits than the field has, both as `overlongVarint`.
    @inlinable @inline(__always)
    public mutating func readVarint(_ field: StaticString, max: UInt64) throws(WireError) -> UInt64 {
        let start = cursor
        guard cursor < bytes.count else { throw error(.truncated, "\(field)") }
        let first = bytes[cursor]
        if first < 0x80 {
            cursor += 1
            return UInt64(first)
        }
        let maxBytes = (64 - max.leadingZeroBitCount + 6) / 7
        var result = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        var index = cursor + 1
        while true {
            guard index < bytes.count else { throw error(.truncated, "\(field)") }
            guard index - start < maxBytes else { throw error(.overlongVarint, "\(field)", at: start) }
            let byte = bytes[index]
            index += 1
            let bits = UInt64(byte & 0x7F)
            // Bits that would be shifted out of 64, or a value above the field's maximum, are too long.
            if shift >= 64 || (bits << shift) >> shift != bits {
                throw error(.overlongVarint, "\(field)", at: start)
            }
            result |= bits << shift
            if byte < 0x80 {
                guard byte != 0 else { throw error(.overlongVarint, "\(field) not in shortest form", at: start) }
                guard result <= max else { throw error(.overlongVarint, "\(field) above \(max)", at: start) }
                cursor = index
                return result
            }
            shift += 7
        }
    }

    @inlinable @inline(__always)
    public mutating func readUInt16LE(_ field: StaticString) throws(WireError) -> UInt16 {
        guard remaining >= 2 else { throw error(.truncated, "\(field)") }
        let value = bytes.loadUnaligned(fromByteOffset: cursor, as: UInt16.self)
        cursor += 2
        return UInt16(littleEndian: value)
    }

    @inlinable @inline(__always)
    public mutating func readUInt64LE(_ field: StaticString) throws(WireError) -> UInt64 {
        guard remaining >= 8 else { throw error(.truncated, "\(field)") }
        let value = bytes.loadUnaligned(fromByteOffset: cursor, as: UInt64.self)
        cursor += 8
        return UInt64(littleEndian: value)
    }

    /// Reads an IEEE 754 binary32, little-endian, that must be finite.
    @inlinable @inline(__always)
    public mutating func readCoordinate(_ field: StaticString) throws(WireError) -> Float {
        guard remaining >= 4 else { throw error(.truncated, "\(field)") }
        let bits = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: cursor, as: UInt32.self))
        let value = Float(bitPattern: bits)
        guard value.isFinite else { throw error(.nonFiniteCoordinate, "\(field)") }
        cursor += 4
        return value
    }

    /// The next `count` bytes (checked to remain) as an array, with one copy.
    @inlinable
    func copy(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 {
                UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(
                    from: bytes.baseAddress! + cursor, byteCount: count)
            }
            initialized = count
        }
    }

    /// Reads every byte not read yet, with no length prefix: the body of an application's kind, borrowed.
    @inlinable
    mutating func readRest() -> UnsafeRawBufferPointer {
        let rest = UnsafeRawBufferPointer(rebasing: bytes[cursor...])
        cursor = bytes.count
        return rest
    }

    /// Reads exactly `count` bytes, with no length prefix.
    @inlinable
    public mutating func readRaw(_ field: StaticString, count: Int) throws(WireError) -> [UInt8] {
        guard remaining >= count else { throw error(.truncated, "\(field)") }
        let value = copy(count)
        cursor += count
        return value
    }

    /// Reads a varint length and that many bytes, refusing lengths above `maxLength` before allocating.
    @inlinable
    public mutating func readBytes(_ field: StaticString, maxLength: Int) throws(WireError) -> [UInt8] {
        let start = cursor
        let length = Int(try readVarint(field, max: UInt64(UInt32.max)))
        guard length <= maxLength else {
            throw error(.fieldTooLong, "\(field) is \(length) bytes, limit \(maxLength)", at: start)
        }
        guard remaining >= length else { throw error(.truncated, "\(field)") }
        let value = copy(length)
        cursor += length
        return value
    }

    /// Reads a varint length and that many bytes of UTF-8.
    @inlinable
    public mutating func readString(_ field: StaticString, maxLength: Int) throws(WireError) -> String {
        let start = cursor
        let length = Int(try readVarint(field, max: UInt64(UInt32.max)))
        guard length <= maxLength else {
            throw error(.fieldTooLong, "\(field) is \(length) bytes, limit \(maxLength)", at: start)
        }
        guard remaining >= length else { throw error(.truncated, "\(field)") }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[cursor..<(cursor + length)])
        // Decoding replaces ill-formed sequences with U+FFFD, so the bytes come back unchanged only if valid.
        let value = String(decoding: slice, as: UTF8.self)
        guard value.utf8.elementsEqual(slice) else { throw error(.invalidUTF8, "\(field)") }
        cursor += length
        return value
    }

    /// Reads a list count, refusing counts above `maxEntries` or above what the remaining bytes can hold.
    @inlinable
    public mutating func readCount(_ field: StaticString, maxEntries: Int, minEntryLength: Int) throws(WireError) -> Int
    {
        let start = cursor
        let count = Int(try readVarint(field, max: UInt64(UInt32.max)))
        guard count <= maxEntries else {
            throw error(.tooManyEntries, "\(field) has \(count) entries, limit \(maxEntries)", at: start)
        }
        guard count * minEntryLength <= remaining else { throw error(.truncated, "\(field)") }
        return count
    }
}
