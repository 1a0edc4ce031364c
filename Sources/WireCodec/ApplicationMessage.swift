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
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { words in
            if let base = bytes.baseAddress { words.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
        }
        storage = .inline(words.0, words.1, count: UInt8(bytes.count))
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
    @inlinable
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
    @inlinable
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
