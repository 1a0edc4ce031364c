/// An application's commands (kinds ``MessageKind/applicationKinds``) framed from their fields and read from their
/// frames by the application itself, with ``ByteWriter`` and ``ByteReader``: the codec writes the frame's header and
/// kind byte and reads them, and never knows the application's kinds. No ``Message`` or ``ApplicationMessage`` is
/// made in between; the bytes, and the errors, are those of an ``ApplicationMessage`` the application writes and
/// reads with the same fields (``ApplicationMessage/init(kind:bodySize:write:)``, ``ApplicationMessage/read(_:)``).
///
/// Both are inlinable into the application's code with its closure, so that a command of a fixed layout is written
/// and read with a few stores and loads.
extension StreamFraming {
    /// Bytes a command of `bodySize` bytes after its kind byte takes as one frame, after checking the frame limit.
    @inlinable @inline(__always)
    public static func applicationFrameSize(bodySize: Int, limits: WireLimits = .default) throws(WireError) -> Int {
        let body = 1 + bodySize
        guard body <= limits.maxFrameLength else {
            throw WireError(.frameTooLong, detail: "application body is \(body) bytes, limit \(limits.maxFrameLength)")
        }
        return ByteWriter.varintSize(UInt64(body)) + body
    }

    /// Writes an application's command as one frame at the start of `destination`: a varint length, the kind byte
    /// `kind` (one of ``MessageKind/applicationKinds``), and the `bodySize` bytes of fields that `write` writes. Returns
    /// the bytes written.
    ///
    /// `destination` must hold at least ``applicationFrameSize(bodySize:limits:)`` bytes: the path for callers that own
    /// their buffers (a SwiftNIO `ByteBuffer`'s `writeWithUnsafeMutableBytes`), which allocates nothing.
    ///
    /// - Throws: ``WireError/Code/frameTooLong`` for a frame above `limits`, ``WireError/Code/valueOutOfRange`` for a
    ///   kind that is not an application kind, as for an ``ApplicationMessage``; nothing is written.
    @inlinable @inline(__always) @discardableResult
    public static func encodeApplication(
        kind: UInt8, bodySize: Int, into destination: UnsafeMutableRawBufferPointer, limits: WireLimits = .default,
        write: (inout ByteWriter) -> Void
    ) throws(WireError) -> Int {
        let size = try applicationFrameSize(kind: kind, bodySize: bodySize, limits: limits)
        precondition(destination.count >= size, "destination holds \(destination.count) bytes, frame needs \(size)")
        writeApplication(
            kind: kind, bodySize: bodySize, into: UnsafeMutableRawBufferPointer(rebasing: destination[0..<size]),
            write: write)
        return size
    }

    /// Appends an application's command as one frame to `buffer` (see
    /// ``encodeApplication(kind:bodySize:into:limits:write:)-(_,_,UnsafeMutableRawBufferPointer,_,_)``).
    @inlinable
    public static func encodeApplication(
        kind: UInt8, bodySize: Int, into buffer: inout [UInt8], limits: WireLimits = .default,
        write: (inout ByteWriter) -> Void
    ) throws(WireError) {
        let size = try applicationFrameSize(kind: kind, bodySize: bodySize, limits: limits)
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: size))
        buffer.withUnsafeMutableBytes { raw in
            let frame = UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + size)])
            writeApplication(kind: kind, bodySize: bodySize, into: frame, write: write)
        }
    }

    /// ``applicationFrameSize(bodySize:limits:)`` of a command of kind `kind`, which must be an application kind.
    @inlinable @inline(__always)
    static func applicationFrameSize(kind: UInt8, bodySize: Int, limits: WireLimits) throws(WireError) -> Int {
        guard MessageKind.applicationKinds.contains(kind) else {
            throw WireError(.valueOutOfRange, detail: "kind \(kind) is no application kind")
        }
        return try applicationFrameSize(bodySize: bodySize, limits: limits)
    }

    /// Writes the frame of an application's command into `frame`, which holds exactly its bytes.
    @inlinable @inline(__always)
    static func writeApplication(
        kind: UInt8, bodySize: Int, into frame: UnsafeMutableRawBufferPointer, write: (inout ByteWriter) -> Void
    ) {
        var writer = ByteWriter(frame)
        writer.writeVarint(UInt64(1 + bodySize))
        writer.write(kind)
        write(&writer)
        precondition(writer.offset == frame.count, "encoded \(writer.offset) bytes, computed \(frame.count)")
    }

    /// The kind byte and the fields (the bytes after the kind byte) of a complete frame of an application's command
    /// whose length fits its one-byte header (at most 127 bytes), at the start of `bytes`, and the bytes the frame
    /// takes; nil for anything else, which ``decodeApplicationFrame(_:limits:read:)`` reads. Checks nothing but the
    /// frame: an application reads the commands it sends most often from the fields ahead of its general path, and
    /// leaves anything it does not take as they are to the general path.
    @inlinable @inline(__always)
    public static func shortApplicationFrame(
        _ bytes: UnsafeRawBufferPointer, limits: WireLimits = .default
    ) -> (kind: UInt8, fields: UnsafeRawBufferPointer, length: Int)? {
        guard bytes.count >= 2 else { return nil }
        // A header below 0x80 is the whole varint: the body's length, kind byte included.
        let body = Int(bytes[0])
        guard body >= 1, body < 0x80, body <= limits.maxFrameLength, bytes.count > body,
            MessageKind.applicationKinds.contains(bytes[1])
        else { return nil }
        return (bytes[1], UnsafeRawBufferPointer(rebasing: bytes[2..<(1 + body)]), 1 + body)
    }

    /// Decodes one frame at the start of `bytes`: a command of the application's, read by `read` straight from the
    /// frame's bytes, or any other message as ``decodeFrame(_:limits:)`` reads it.
    ///
    /// `read` gets the kind byte of a frame of an application kind and a reader of the fields after it, which it must
    /// read to their end; it returns nil for a kind the application does not take, before reading anything, and that
    /// frame is read as any other. Returns the frame and the bytes it took, or nil when more bytes are needed. Error
    /// offsets count from the start of the frame.
    ///
    /// - Throws: ``WireError`` for a malformed frame, what `read` throws, or ``WireError/Code/trailingBytes`` when it
    ///   left bytes unread.
    @inlinable @inline(__always)
    public static func decodeApplicationFrame<Command>(
        _ bytes: UnsafeRawBufferPointer, limits: WireLimits = .default,
        read: (UInt8, inout ByteReader) throws(WireError) -> Command?
    ) throws(WireError) -> (frame: ApplicationFrame<Command>, length: Int)? {
        guard let first = bytes.first else { return nil }
        let headerLength: Int
        let bodyLength: Int
        if first < 0x80 {
            // A header below 0x80 is the whole varint.
            headerLength = 1
            bodyLength = Int(first)
        } else {
            guard let header = try decodeHeader(bytes, limits: limits) else { return nil }
            (headerLength, bodyLength) = header
        }
        let total = headerLength + bodyLength
        guard bytes.count >= total else {
            // What the general path refuses before the body is there (a length above the limit) is refused there.
            return bodyLength <= limits.maxFrameLength ? nil : try decodeOtherFrame(bytes, limits: limits)
        }
        guard bodyLength >= 1, bodyLength <= limits.maxFrameLength,
            MessageKind.applicationKinds.contains(bytes[headerLength])
        else { return try decodeOtherFrame(bytes, limits: limits) }
        let kind = bytes[headerLength]
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[(headerLength + 1)..<total]))
        let command: Command?
        do throws(WireError) {
            command = try read(kind, &reader)
            if command != nil, !reader.isAtEnd {
                throw reader.error(.trailingBytes, "\(reader.remaining) bytes after the fields of kind \(kind)")
            }
        } catch {
            var located = error
            located.offset += headerLength + 1
            throw located
        }
        guard let command else { return try decodeOtherFrame(bytes, limits: limits) }
        return (.command(command), total)
    }

    /// ``decodeApplicationFrame(_:limits:read:)`` of a frame that is not one of the application's commands.
    @inlinable @inline(never)
    static func decodeOtherFrame<Command>(
        _ bytes: UnsafeRawBufferPointer, limits: WireLimits
    ) throws(WireError) -> (frame: ApplicationFrame<Command>, length: Int)? {
        guard let (message, length) = try decodeFrame(bytes, limits: limits) else { return nil }
        return (.other(message), length)
    }
}
