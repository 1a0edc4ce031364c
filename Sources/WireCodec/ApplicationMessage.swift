/// A command of an application that takes kinds of its own (`0x20...0x29`, ``MessageKind/applicationKinds``; the
/// original apps' in the BubblesAndCounter module): its kind byte and its body, the bytes after the kind byte, which
/// the codec carries without reading them. The application reads and writes the body with ``ByteReader`` and
/// ``ByteWriter``, as the codec does the session's own kinds. See docs/wire-format.md, section 3.1.
///
/// A body of at most ``inlineCapacity`` bytes (every command of the original apps but the lists, `bubbleState` and
/// long names) is kept in place: reading and writing it allocates nothing.
public struct ApplicationMessage: Hashable, Sendable {
    /// The kind byte, one of ``MessageKind/applicationKinds``.
    public var kind: UInt8
    @usableFromInline var storage: Storage

    /// Where the body is.
    @usableFromInline
    enum Storage: Sendable {
        /// Up to 16 bytes in place, and how many.
        case inline(UInt64, UInt64, count: UInt8)
        /// A longer body.
        case array([UInt8])
    }

    /// The longest body kept in place, in bytes.
    public static let inlineCapacity = 16

    /// The fields after the kind byte, in the application's layout; the frame (or the datagram) bounds them.
    public var body: [UInt8] {
        get { withBody { Array($0) } }
        set { self = ApplicationMessage(kind: kind, body: newValue) }
    }

    /// The body's length in bytes.
    @inlinable
    public var bodyCount: Int {
        switch storage {
        case .inline(_, _, let count): Int(count)
        case .array(let bytes): bytes.count
        }
    }

    /// Creates a message of kind `kind` with `body`.
    @inlinable
    public init(kind: UInt8, body: [UInt8]) {
        self = body.withUnsafeBytes { ApplicationMessage(kind: kind, copying: $0) }
    }

    /// Creates a message of kind `kind` whose body is a copy of `bytes`.
    @inlinable
    public init(kind: UInt8, copying bytes: UnsafeRawBufferPointer) {
        self.kind = kind
        guard bytes.count <= Self.inlineCapacity else {
            storage = .array(Array(bytes))
            return
        }
        let words = Self.load(bytes)
        storage = .inline(words.0, words.1, count: UInt8(bytes.count))
    }

    /// Creates a message of kind `kind` whose body, of at most ``inlineCapacity`` bytes, is a copy of `bytes`, kept in
    /// place.
    @inlinable @inline(__always)
    init(kind: UInt8, inline bytes: UnsafeRawBufferPointer) {
        let words = Self.load(bytes)
        self.kind = kind
        storage = .inline(words.0, words.1, count: UInt8(bytes.count))
    }

    /// The words of a body of at most 16 bytes kept in place (zero past its end), read with a few loads of the
    /// bytes instead of a copy of a length known only at run time.
    @inlinable @inline(__always)
    static func load(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        let count = bytes.count
        precondition(count <= inlineCapacity, "a body of \(count) bytes is not kept in place")
        func word(at offset: Int) -> UInt64 {
            UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        func half(at offset: Int) -> UInt64 {
            UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }
        // Byte i of the body is bits 8i... of the pair, as their memory holds them little-endian. Loads that overlap
        // read the same bytes twice, which the shifts line up.
        if count >= 8 {
            // The last 8 bytes, shifted down past the 16 - count that are the first word's.
            let second = word(at: count - 8) >> UInt64((16 - count) * 8)
            return (word(at: 0).littleEndian, second.littleEndian)
        }
        var first: UInt64 = 0
        if count >= 4 {
            first = half(at: 0) | half(at: count - 4) << UInt64((count - 4) * 8)
        } else {
            for index in 0..<count { first |= UInt64(bytes[index]) << UInt64(index * 8) }
        }
        return (first.littleEndian, 0)
    }

    /// Writes the first `count` bytes of the words of a body kept in place to `destination`, which holds exactly
    /// `count` bytes, with a few stores instead of a copy of a length known only at run time.
    @inlinable @inline(__always)
    static func store(_ words: (UInt64, UInt64), count: Int, into destination: UnsafeMutableRawBufferPointer) {
        precondition(destination.count == count && count <= inlineCapacity, "no room for a body kept in place")
        let first = UInt64(littleEndian: words.0)
        let second = UInt64(littleEndian: words.1)
        if count >= 8 {
            destination.storeBytes(of: first.littleEndian, toByteOffset: 0, as: UInt64.self)
            // The last 8 bytes: the end of the first word, then the start of the second.
            let last = first >> UInt64((count - 8) * 8) | second << UInt64((16 - count) * 8)
            destination.storeBytes(of: last.littleEndian, toByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            destination.storeBytes(of: UInt32(truncatingIfNeeded: first).littleEndian, toByteOffset: 0, as: UInt32.self)
            let last = UInt32(truncatingIfNeeded: first >> UInt64((count - 4) * 8))
            destination.storeBytes(of: last.littleEndian, toByteOffset: count - 4, as: UInt32.self)
        } else {
            for index in 0..<count {
                destination.storeBytes(
                    of: UInt8(truncatingIfNeeded: first >> UInt64(index * 8)), toByteOffset: index, as: UInt8.self)
            }
        }
    }

    /// Creates a message of kind `kind` whose body of exactly `bodySize` bytes `write` writes.
    @inlinable
    public init(kind: UInt8, bodySize: Int, write: (inout ByteWriter) -> Void) {
        self.kind = kind
        guard bodySize <= Self.inlineCapacity else {
            storage = .array(
                [UInt8](unsafeUninitializedCapacity: bodySize) { buffer, initialized in
                    Self.write(bodySize, into: UnsafeMutableRawBufferPointer(buffer), write)
                    initialized = bodySize
                })
            return
        }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { words in
            Self.write(bodySize, into: UnsafeMutableRawBufferPointer(rebasing: words[..<bodySize]), write)
        }
        storage = .inline(words.0, words.1, count: UInt8(bodySize))
    }

    @inlinable
    static func write(_ size: Int, into memory: UnsafeMutableRawBufferPointer, _ write: (inout ByteWriter) -> Void) {
        var writer = ByteWriter(memory)
        write(&writer)
        precondition(writer.offset == size, "wrote \(writer.offset) bytes of a body of \(size)")
    }

    /// Calls `body` with the body's bytes.
    @inlinable @inline(__always)
    public func withBody<Value, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        switch storage {
        case .inline(let first, let second, let count):
            let result: Result<Value, Failure> = withUnsafeBytes(of: (first, second)) { raw in
                Result { () throws(Failure) in try body(UnsafeRawBufferPointer(rebasing: raw[..<Int(count)])) }
            }
            return try result.get()
        case .array(let bytes):
            let result: Result<Value, Failure> = bytes.withUnsafeBytes { raw in
                Result { () throws(Failure) in try body(raw) }
            }
            return try result.get()
        }
    }

    /// Reads the body with `read`, which must take every byte of it. Error offsets count from the kind byte, as for
    /// the session's own kinds.
    ///
    /// - Throws: ``WireError`` from `read`, or ``WireError/Code/trailingBytes`` when it left bytes unread.
    @inlinable @inline(__always)
    public func read<Value>(_ read: (inout ByteReader) throws(WireError) -> Value) throws(WireError) -> Value {
        do throws(WireError) {
            return try withBody { raw throws(WireError) in
                var reader = ByteReader(raw)
                let value = try read(&reader)
                guard reader.isAtEnd else {
                    throw reader.error(.trailingBytes, "\(reader.remaining) bytes after the fields of kind \(kind)")
                }
                return value
            }
        } catch {
            var located = error
            located.offset += 1
            throw located
        }
    }

    public static func == (lhs: ApplicationMessage, rhs: ApplicationMessage) -> Bool {
        guard lhs.kind == rhs.kind, lhs.bodyCount == rhs.bodyCount else { return false }
        return lhs.withBody { left in rhs.withBody { right in left.elementsEqual(right) } }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        withBody { hasher.combine(bytes: $0) }
    }
}
