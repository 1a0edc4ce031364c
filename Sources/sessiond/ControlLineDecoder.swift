import NIOCore
import SessionControl

/// Splits the control stream into lines, refusing a line longer than `ControlSocket.maxLineLength`.
struct ControlLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    /// A request line that is too long.
    struct LineTooLong: Error, CustomStringConvertible {
        var description: String { "request line longer than \(ControlSocket.maxLineLength) bytes" }
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > ControlSocket.maxLineLength { throw LineTooLong() }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex
        guard length <= ControlSocket.maxLineLength else { throw LineTooLong() }
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
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
