/// Length-prefixed framing for byte streams (TCP, RFCOMM): a varint body length, then the body.
public enum StreamFraming {
    /// Bytes `message` takes as one frame, after checking its fields and the frame limit.
    @inlinable
    public static func frameSize(of message: Message, limits: WireLimits = .default) throws(WireError) -> Int {
        let body = try checkedBodySize(of: message, limits: limits)
        return ByteWriter.varintSize(UInt64(body)) + body
    }

    /// Writes `message` as one frame at the start of `destination` and returns the bytes written.
    ///
    /// `destination` must hold at least `frameSize(of:)` bytes; this is the allocation-free path for callers that own
    /// their buffers (for example a SwiftNIO `ByteBuffer`).
    @inlinable @inline(__always) @discardableResult
    public static func encode(
        _ message: Message, into destination: UnsafeMutableRawBufferPointer, limits: WireLimits = .default
    ) throws(WireError) -> Int {
        if let written = encodeInline(message, into: destination, limits: limits) { return written }
        return try encodeAny(message, into: destination, limits: limits)
    }

    /// ``encode(_:into:limits:)`` of any message: the general path.
    @inlinable
    static func encodeAny(
        _ message: Message, into destination: UnsafeMutableRawBufferPointer, limits: WireLimits
    ) throws(WireError) -> Int {
        let body = try checkedBodySize(of: message, limits: limits)
        let size = ByteWriter.varintSize(UInt64(body)) + body
        precondition(destination.count >= size, "destination holds \(destination.count) bytes, frame needs \(size)")
        write(message, bodySize: body, into: UnsafeMutableRawBufferPointer(rebasing: destination[0..<size]))
        return size
    }

    /// Appends `message` as one frame to `buffer`.
    @inlinable
    public static func encode(
        _ message: Message, into buffer: inout [UInt8], limits: WireLimits = .default
    ) throws(WireError) {
        let body = try checkedBodySize(of: message, limits: limits)
        let size = ByteWriter.varintSize(UInt64(body)) + body
        if size <= 64 {
            // Small frames (the applications' commands) are written on the stack and appended in one copy.
            withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { scratch in
                write(message, bodySize: body, into: scratch)
                buffer.append(contentsOf: UnsafeRawBufferPointer(scratch))
            }
        } else {
            let start = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: size))
            buffer.withUnsafeMutableBytes { raw in
                write(
                    message, bodySize: body, into: UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + size)]))
            }
        }
    }

    @inlinable
    static func checkedBodySize(of message: Message, limits: WireLimits) throws(WireError) -> Int {
        let body = try message.bodySize()
        guard body <= limits.maxFrameLength else {
            throw WireError(
                .frameTooLong, detail: "\(message.kind) body is \(body) bytes, limit \(limits.maxFrameLength)")
        }
        return body
    }

    @inlinable @inline(__always)
    static func write(_ message: Message, bodySize: Int, into frame: UnsafeMutableRawBufferPointer) {
        var writer = ByteWriter(frame)
        writer.writeVarint(UInt64(bodySize))
        message.writeBody(to: &writer)
        precondition(writer.offset == frame.count, "encoded \(writer.offset) bytes, computed \(frame.count)")
    }

    /// Encodes `message` as one frame into a new array.
    public static func encode(_ message: Message, limits: WireLimits = .default) throws(WireError) -> [UInt8] {
        var buffer: [UInt8] = []
        try encode(message, into: &buffer, limits: limits)
        return buffer
    }

    /// Reads a frame header at the start of `bytes`.
    ///
    /// Returns the header length and the body length, or nil when more bytes are needed. Refuses a body length
    /// above the limit as soon as the header is complete, before any of the body is buffered.
    @inlinable
    public static func decodeHeader(
        _ bytes: UnsafeRawBufferPointer, limits: WireLimits = .default
    ) throws(WireError) -> (headerLength: Int, bodyLength: Int)? {
        var length = 0
        var shift = 0
        for index in 0..<Wire.maxFrameHeaderLength {
            guard index < bytes.count else { return nil }
            let byte = bytes[index]
            length |= Int(byte & 0x7F) << shift
            if byte < 0x80 {
                if byte == 0 && index > 0 {
                    throw WireError(.overlongVarint, offset: 0, detail: "frame length not in shortest form")
                }
                guard length <= limits.maxFrameLength else {
                    throw WireError(
                        .frameTooLong, offset: 0,
                        detail: "frame body is \(length) bytes, limit \(limits.maxFrameLength)")
                }
                return (index + 1, length)
            }
            shift += 7
            // A partial length that already exceeds the limit cannot shrink.
            if length > limits.maxFrameLength {
                throw WireError(
                    .frameTooLong, offset: 0, detail: "frame body above \(limits.maxFrameLength) bytes")
            }
        }
        throw WireError(
            .overlongVarint, offset: 0, detail: "frame length longer than \(Wire.maxFrameHeaderLength) bytes")
    }

    /// Decodes one frame at the start of `bytes`.
    ///
    /// Returns the message and the bytes the frame took, or nil when more bytes are needed. Error offsets count from
    /// the start of the frame.
    @inlinable @inline(__always)
    public static func decodeFrame(
        _ bytes: UnsafeRawBufferPointer, limits: WireLimits = .default
    ) throws(WireError) -> (message: Message, length: Int)? {
        if let frame = decodeInline(bytes, limits: limits) { return frame }
        return try decodeAnyFrame(bytes, limits: limits)
    }

    /// ``decodeFrame(_:limits:)`` of any frame: the general path.
    @inlinable
    static func decodeAnyFrame(
        _ bytes: UnsafeRawBufferPointer, limits: WireLimits
    ) throws(WireError) -> (message: Message, length: Int)? {
        guard let (headerLength, bodyLength) = try decodeHeader(bytes, limits: limits) else { return nil }
        let total = headerLength + bodyLength
        guard bytes.count >= total else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[headerLength..<total])
        do throws(WireError) {
            return (try Message.decode(body: body), total)
        } catch {
            var located = error
            located.offset += headerLength
            throw located
        }
    }
}
