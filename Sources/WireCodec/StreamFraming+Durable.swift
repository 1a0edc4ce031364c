/// `durableData` frames written from a payload the caller holds, without a `Message` in between: the header goes in
/// front of the payload's bytes, which the caller copies once, straight after it.
///
/// The bytes are exactly those of `Message.durableData` through the general path (the tests compare both).
extension StreamFraming {
    /// Bytes in front of a `durableData` payload of `payloadLength` bytes numbered `id`: the frame length, the kind,
    /// the id and the payload length.
    @inlinable
    public static func durableFrameHeaderSize(id: UInt64, payloadLength: Int) -> Int {
        let body = durableBodySize(id: id, payloadLength: payloadLength)
        return ByteWriter.varintSize(UInt64(body)) + body - payloadLength
    }

    /// The body of a `durableData` message: its kind, its id, the payload's length and the payload.
    @inlinable
    static func durableBodySize(id: UInt64, payloadLength: Int) -> Int {
        1 + ByteWriter.varintSize(id) + ByteWriter.varintSize(UInt64(payloadLength)) + payloadLength
    }

    /// Writes the header of a `durableData` frame numbered `id` for a payload of `payloadLength` bytes at the start
    /// of `destination` and returns its size; the payload goes right after it.
    ///
    /// - Throws: `valueOutOfRange` for id 0, `fieldTooLong` above `Wire.maxDataLength`, `frameTooLong` above the
    ///   limits' frame length.
    @inlinable @discardableResult
    public static func writeDurableFrameHeader(
        id: UInt64, payloadLength: Int, into destination: UnsafeMutableRawBufferPointer, limits: WireLimits = .default
    ) throws(WireError) -> Int {
        guard id != 0 else { throw WireError(.valueOutOfRange, detail: "durable id 0") }
        guard payloadLength <= Wire.maxDataLength else {
            throw WireError(
                .fieldTooLong, detail: "durable data is \(payloadLength) bytes, limit \(Wire.maxDataLength)")
        }
        let body = durableBodySize(id: id, payloadLength: payloadLength)
        guard body <= limits.maxFrameLength else {
            throw WireError(.frameTooLong, detail: "durable data body is \(body) bytes, limit \(limits.maxFrameLength)")
        }
        let size = durableFrameHeaderSize(id: id, payloadLength: payloadLength)
        precondition(destination.count >= size, "destination holds \(destination.count) bytes, header needs \(size)")
        var writer = ByteWriter(UnsafeMutableRawBufferPointer(rebasing: destination[0..<size]))
        writer.writeVarint(UInt64(body))
        writer.write(MessageKind.durableData.rawValue)
        writer.writeVarint(id)
        writer.writeVarint(UInt64(payloadLength))
        return size
    }
}
