import LinkCrypto
import NIOCore
import WireCodec

/// Splits a byte stream into messages with WireCodec's stream framing. A malformed frame is an error: the link
/// closes with the reason logged.
///
/// With a secret, the frames after the peer's `auth` come in sealed records: each record is opened (a bad tag is
/// an error, and the link closes) and its plaintext, which may hold parts of frames, is framed as before.
struct WireFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = Message

    let limits: WireLimits
    let security: LinkSecurity?
    private var opener: RecordOpener?
    /// Opened bytes not yet framed.
    private var plaintext = ByteBuffer()

    init(limits: WireLimits, security: LinkSecurity? = nil) {
        self.limits = limits
        self.security = security
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if opener != nil { return try decodeSealed(context: context, buffer: &buffer) }
        let frame = try buffer.withUnsafeReadableBytes { raw in try StreamFraming.decodeFrame(raw, limits: limits) }
        guard let (message, length) = frame else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: length)
        if case .auth = message, let security {
            // The peer's last clear frame: what follows is sealed with the keys derived from its hello.
            opener = security.takeOpener()
        }
        context.fireChannelRead(wrapInboundOut(message))
        return .continue
    }

    private mutating func decodeSealed(
        context: ChannelHandlerContext, buffer: inout ByteBuffer
    ) throws
        -> DecodingState
    {
        guard var opener else { return .needMoreData }
        let record = try buffer.withUnsafeReadableBytes { raw in try opener.open(raw) }
        self.opener = opener
        guard let (bytes, consumed) = record else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: consumed)
        plaintext.writeBytes(bytes)
        while let (message, length) = try plaintext.withUnsafeReadableBytes({ raw in
            try StreamFraming.decodeFrame(raw, limits: limits)
        }) {
            plaintext.moveReaderIndex(forwardBy: length)
            context.fireChannelRead(wrapInboundOut(message))
        }
        plaintext.discardReadBytes()
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
