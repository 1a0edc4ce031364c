import NIOCore
import WireCodec

/// Splits a byte stream into messages with WireCodec's stream framing. A malformed frame is an error: the link
/// closes with the reason logged.
struct WireFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = Message

    let limits: WireLimits

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let frame = try buffer.withUnsafeReadableBytes { raw in try StreamFraming.decodeFrame(raw, limits: limits) }
        guard let (message, length) = frame else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: length)
        context.fireChannelRead(wrapInboundOut(message))
        return .continue
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws
        -> DecodingState
    {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

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
}
