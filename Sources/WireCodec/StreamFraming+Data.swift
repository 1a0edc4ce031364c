/// `data` frames without a `Message` in between: the header is written in front of payload bytes the caller places
/// itself, and a received frame is found by where its payload lies, so that a payload is copied once at most on each
/// side (with its header into a write on the way out, nowhere on the way in).
///
/// The bytes are exactly those of `Message.data` through the general path (the tests compare both).
extension StreamFraming {
    /// Bytes in front of a `data` payload of `payloadLength` bytes: the frame length, the kind and the payload length.
    @inlinable
    public static func dataFrameHeaderSize(payloadLength: Int) -> Int {
        let body = dataBodySize(payloadLength: payloadLength)
        return ByteWriter.varintSize(UInt64(body)) + body - payloadLength
    }

    /// The body of a `data` message of `payloadLength` bytes: its kind, the payload's length and the payload.
    @inlinable
    static func dataBodySize(payloadLength: Int) -> Int {
        1 + ByteWriter.varintSize(UInt64(payloadLength)) + payloadLength
    }

    /// Writes the header of a `data` frame for a payload of `payloadLength` bytes at the start of `destination` and
    /// returns its size; the payload goes right after it.
    ///
    /// - Throws: `fieldTooLong` above `Wire.maxDataLength`, `frameTooLong` above the limits' frame length.
    @inlinable @discardableResult
    public static func writeDataFrameHeader(
        payloadLength: Int, into destination: UnsafeMutableRawBufferPointer, limits: WireLimits = .default
    ) throws(WireError) -> Int {
        guard payloadLength <= Wire.maxDataLength else {
            throw WireError(.fieldTooLong, detail: "data is \(payloadLength) bytes, limit \(Wire.maxDataLength)")
        }
        let body = dataBodySize(payloadLength: payloadLength)
        guard body <= limits.maxFrameLength else {
            throw WireError(.frameTooLong, detail: "data body is \(body) bytes, limit \(limits.maxFrameLength)")
        }
        let size = dataFrameHeaderSize(payloadLength: payloadLength)
        precondition(destination.count >= size, "destination holds \(destination.count) bytes, header needs \(size)")
        var writer = ByteWriter(UnsafeMutableRawBufferPointer(rebasing: destination[0..<size]))
        writer.writeVarint(UInt64(body))
        writer.write(MessageKind.data.rawValue)
        writer.writeVarint(UInt64(payloadLength))
        return size
    }

    /// Where the payload of the whole, well-formed `data` frame at the start of `bytes` lies, and the frame's length;
    /// nil for anything else: another kind, an incomplete frame, or a malformed one (the general path,
    /// ``decodeFrame(_:limits:)``, then says what is wrong, or waits for more bytes).
    @inlinable
    public static func locateDataFrame(
        _ bytes: UnsafeRawBufferPointer, limits: WireLimits = .default
    ) -> (payloadOffset: Int, payloadLength: Int, frameLength: Int)? {
        guard let (headerLength, bodyLength) = try? decodeHeader(bytes, limits: limits),
            bodyLength >= 2, bytes.count >= headerLength + bodyLength,
            bytes[headerLength] == MessageKind.data.rawValue
        else { return nil }
        var length = 0
        var shift = 0
        var index = headerLength + 1
        let end = headerLength + bodyLength
        while true {
            guard index < end, shift < 21 else { return nil }
            let byte = bytes[index]
            length |= Int(byte & 0x7F) << shift
            index += 1
            if byte < 0x80 {
                guard byte != 0 || index == headerLength + 2 else { return nil }  // shortest form only
                break
            }
            shift += 7
        }
        guard length <= Wire.maxDataLength, index + length == end else { return nil }
        return (index, length, end)
    }
}
