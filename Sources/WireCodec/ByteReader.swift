/// Reads wire fields from a borrowed byte range, checking every bound.
///
/// Never traps and never allocates, except for the string and bytes fields it returns, whose size is checked against
/// their limit before anything is allocated.
@usableFromInline
struct ByteReader: ~Copyable {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline var offset: Int

    @inlinable
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.offset = 0
    }

    @inlinable
    var isAtEnd: Bool { offset == bytes.count }
    @inlinable
    var remaining: Int { bytes.count - offset }

    @usableFromInline
    func error(_ code: WireError.Code, _ detail: String, at offset: Int? = nil) -> WireError {
        WireError(code, offset: offset ?? self.offset, detail: detail)
    }

    @inlinable @inline(__always)
    mutating func readByte(_ field: StaticString) throws(WireError) -> UInt8 {
        guard offset < bytes.count else { throw error(.truncated, "\(field)") }
        let value = bytes[offset]
        offset += 1
        return value
    }

    /// Reads an unsigned LEB128 varint of at most `maxBytes` bytes whose value is at most `max`.
    ///
    /// Rejects encodings that are not the shortest (a last byte of zero after the first) and values that need more
    /// bits than the field has, both as `overlongVarint`.
    @inlinable @inline(__always)
    mutating func readVarint(_ field: StaticString, max: UInt64) throws(WireError) -> UInt64 {
        let start = offset
        guard offset < bytes.count else { throw error(.truncated, "\(field)") }
        let first = bytes[offset]
        if first < 0x80 {
            offset += 1
            return UInt64(first)
        }
        let maxBytes = (64 - max.leadingZeroBitCount + 6) / 7
        var result = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        var index = offset + 1
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
                offset = index
                return result
            }
            shift += 7
        }
    }

    @inlinable @inline(__always)
    mutating func readUInt16LE(_ field: StaticString) throws(WireError) -> UInt16 {
        guard remaining >= 2 else { throw error(.truncated, "\(field)") }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)
        offset += 2
        return UInt16(littleEndian: value)
    }

    @inlinable @inline(__always)
    mutating func readUInt64LE(_ field: StaticString) throws(WireError) -> UInt64 {
        guard remaining >= 8 else { throw error(.truncated, "\(field)") }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        offset += 8
        return UInt64(littleEndian: value)
    }

    /// Reads an IEEE 754 binary32, little-endian, that must be finite.
    @inlinable @inline(__always)
    mutating func readCoordinate(_ field: StaticString) throws(WireError) -> Float {
        guard remaining >= 4 else { throw error(.truncated, "\(field)") }
        let bits = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        let value = Float(bitPattern: bits)
        guard value.isFinite else { throw error(.nonFiniteCoordinate, "\(field)") }
        offset += 4
        return value
    }

    /// The next `count` bytes (checked to remain) as an array, with one copy.
    @inlinable
    func copy(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 {
                UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(
                    from: bytes.baseAddress! + offset, byteCount: count)
            }
            initialized = count
        }
    }

    /// Reads exactly `count` bytes, with no length prefix.
    @inlinable
    mutating func readRaw(_ field: StaticString, count: Int) throws(WireError) -> [UInt8] {
        guard remaining >= count else { throw error(.truncated, "\(field)") }
        let value = copy(count)
        offset += count
        return value
    }

    /// Reads a varint length and that many bytes, refusing lengths above `maxLength` before allocating.
    @inlinable
    mutating func readBytes(_ field: StaticString, maxLength: Int) throws(WireError) -> [UInt8] {
        let start = offset
        let length = Int(try readVarint(field, max: UInt64(UInt32.max)))
        guard length <= maxLength else {
            throw error(.fieldTooLong, "\(field) is \(length) bytes, limit \(maxLength)", at: start)
        }
        guard remaining >= length else { throw error(.truncated, "\(field)") }
        let value = copy(length)
        offset += length
        return value
    }

    /// Reads a varint length and that many bytes of UTF-8.
    @inlinable
    mutating func readString(_ field: StaticString, maxLength: Int) throws(WireError) -> String {
        let start = offset
        let length = Int(try readVarint(field, max: UInt64(UInt32.max)))
        guard length <= maxLength else {
            throw error(.fieldTooLong, "\(field) is \(length) bytes, limit \(maxLength)", at: start)
        }
        guard remaining >= length else { throw error(.truncated, "\(field)") }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
        // Decoding replaces ill-formed sequences with U+FFFD, so the bytes come back unchanged only if valid.
        let value = String(decoding: slice, as: UTF8.self)
        guard value.utf8.elementsEqual(slice) else { throw error(.invalidUTF8, "\(field)") }
        offset += length
        return value
    }

    /// Reads a list count, refusing counts above `maxEntries` or above what the remaining bytes can hold.
    @inlinable
    mutating func readCount(_ field: StaticString, maxEntries: Int, minEntryLength: Int) throws(WireError) -> Int {
        let start = offset
        let count = Int(try readVarint(field, max: UInt64(UInt32.max)))
        guard count <= maxEntries else {
            throw error(.tooManyEntries, "\(field) has \(count) entries, limit \(maxEntries)", at: start)
        }
        guard count * minEntryLength <= remaining else { throw error(.truncated, "\(field)") }
        return count
    }
}
