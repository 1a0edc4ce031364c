/// A command of an application that takes kinds of its own (`0x20...0x29`, ``MessageKind/applicationKinds``; the
/// original apps' in the BubblesAndCounter module): its kind byte and its body, the bytes after the kind byte, which
/// the codec carries without reading them. The application reads and writes the body with ``ByteReader`` and
/// ``ByteWriter``, as the codec does the session's own kinds. See docs/wire-format.md, section 3.1.
public struct ApplicationMessage: Hashable, Sendable {
    /// The kind byte, one of ``MessageKind/applicationKinds``.
    public var kind: UInt8
    /// The fields after the kind byte, in the application's layout; the frame (or the datagram) bounds them.
    public var body: [UInt8]

    /// Creates a message of kind `kind` with `body`.
    @inlinable
    public init(kind: UInt8, body: [UInt8]) {
        self.kind = kind
        self.body = body
    }

    /// Creates a message of kind `kind` whose body of exactly `bodySize` bytes `write` writes.
    @inlinable
    public init(kind: UInt8, bodySize: Int, write: (inout ByteWriter) -> Void) {
        self.kind = kind
        body = [UInt8](unsafeUninitializedCapacity: bodySize) { buffer, initialized in
            var writer = ByteWriter(UnsafeMutableRawBufferPointer(buffer))
            write(&writer)
            precondition(writer.offset == bodySize, "wrote \(writer.offset) bytes of a body of \(bodySize)")
            initialized = bodySize
        }
    }

    /// Reads the body with `read`, which must take every byte of it. Error offsets count from the kind byte, as for
    /// the session's own kinds.
    ///
    /// - Throws: ``WireError`` from `read`, or ``WireError/Code/trailingBytes`` when it left bytes unread.
    @inlinable
    public func read<Value>(_ read: (inout ByteReader) throws(WireError) -> Value) throws(WireError) -> Value {
        let result: Result<Value, WireError> = body.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do throws(WireError) {
                let value = try read(&reader)
                guard reader.isAtEnd else {
                    throw reader.error(.trailingBytes, "\(reader.remaining) bytes after the fields of kind \(kind)")
                }
                return .success(value)
            } catch {
                var located = error
                located.offset += 1
                return .failure(located)
            }
        }
        return try result.get()
    }
}
