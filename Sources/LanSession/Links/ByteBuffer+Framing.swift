import NIOCore
import WireCodec

/// Writing WireCodec's frames and datagram headers straight into a buffer's storage.
extension ByteBuffer {
    /// Appends a datagram header.
    mutating func writeDatagramHeader(_ header: DatagramHeader) {
        writeWithUnsafeMutableBytes(minimumWritableBytes: header.size) { header.write(into: $0) }
    }

    /// Appends `message` as one stream frame.
    mutating func writeFrame(_ message: Message) throws(WireError) {
        let size = try StreamFraming.frameSize(of: message)
        var failure: WireError?
        writeWithUnsafeMutableBytes(minimumWritableBytes: size) { raw in
            do throws(WireError) {
                return try StreamFraming.encode(message, into: raw)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
    }

    /// Appends the header of a `data` frame for a payload of `payloadLength` bytes (the payload goes after it).
    mutating func writeDataFrameHeader(payloadLength: Int) throws(WireError) {
        let size = StreamFraming.dataFrameHeaderSize(payloadLength: payloadLength)
        var failure: WireError?
        writeWithUnsafeMutableBytes(minimumWritableBytes: size) { raw in
            do throws(WireError) {
                return try StreamFraming.writeDataFrameHeader(payloadLength: payloadLength, into: raw)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
    }

    /// Appends `payload` as one `durableData` frame numbered `id`: its header, then a copy of its bytes.
    mutating func writeDurableFrame(id: UInt64, payload: ByteBuffer) throws(WireError) {
        let size = StreamFraming.durableFrameHeaderSize(id: id, payloadLength: payload.readableBytes)
        var failure: WireError?
        writeWithUnsafeMutableBytes(minimumWritableBytes: size) { raw in
            do throws(WireError) {
                return try StreamFraming.writeDurableFrameHeader(
                    id: id, payloadLength: payload.readableBytes, into: raw)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        writeImmutableBuffer(payload)
    }

    /// Appends `payload` as one `data` frame: its header, then a copy of its bytes.
    mutating func writeDataFrame(_ payload: ByteBuffer) throws(WireError) {
        try writeDataFrameHeader(payloadLength: payload.readableBytes)
        writeImmutableBuffer(payload)
    }
}
