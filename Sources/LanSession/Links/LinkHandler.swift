import NIOCore
import WireCodec

/// What a link's handler tells the session: the link opened, what it reads, the end of a read, its close or failure.
/// ``SessionCore`` is the one; it runs on the core's event loop.
protocol LinkEvents: AnyObject {
    /// The link's channel became active: the session makes a ``Link`` of it.
    func linkOpened(
        channel: any Channel, role: LinkStateMachine.Role, transport: any Transport, endpoint: Endpoint?,
        intendedPeer: PeerID?, security: LinkSecurity?
    ) -> Link
    /// A message arrived on `link`.
    func received(_ message: Message, on link: Link)
    /// An application's `data` message arrived on `link`, its payload a slice of the read.
    func receivedData(_ payload: ByteBuffer, on link: Link)
    /// A read ended (`link` is nil when the channel had not become active).
    func endOfRead(on link: Link?)
    /// The link's channel closed.
    func linkClosed(_ link: Link)
    /// The link's pipeline failed (a malformed frame, a sealed record refused).
    func linkFailed(_ link: Link, error: any Error)
}

/// Frames what a link reads into messages and hands them, and the link's events, to the session (its
/// ``LinkEvents``, a concrete type so that each message is a direct call); runs on the session's event loop.
///
/// The framing is done here rather than by a `ByteToMessageHandler` in front: a message goes from the read buffer to
/// the core without being boxed for the pipeline, and the bytes of a frame that a read ends in the middle of are copied
/// and kept; the next read gives it only what it lacks, and its frames after that are framed where they lie (their
/// payloads are slices of the read buffer). Like `ByteToMessageHandler`,
/// it takes reads that come while it frames one (see `framing`) in their order.
final class LinkHandler<Core: LinkEvents>: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let core: Core
    private let role: LinkStateMachine.Role
    private let transport: any Transport
    private let endpoint: Endpoint?
    private let intendedPeer: PeerID?
    private let security: LinkSecurity?
    private var link: Link?
    /// Steps for every frame, in calls that reach nothing else: not checked for exclusive access at run time.
    @exclusivity(unchecked) private var decoder: WireFrameDecoder
    /// Bytes not framed yet: an incomplete frame waiting for the rest, or what arrived while a read was being framed.
    private var unframed: ByteBuffer?
    /// A read is being framed. NIO can read again inside it: a write that fails drains the socket at once (from
    /// within the write, so from within the core's handling of a message); those bytes follow the ones being framed.
    private var framing = false
    /// A frame was malformed: nothing more is read.
    private var failed = false

    init(
        core: Core, role: LinkStateMachine.Role, transport: any Transport, endpoint: Endpoint?,
        intendedPeer: PeerID?, security: LinkSecurity? = nil
    ) {
        self.security = security
        self.core = core
        self.role = role
        self.transport = transport
        self.endpoint = endpoint
        self.intendedPeer = intendedPeer
        self.decoder = WireFrameDecoder(limits: .default, security: security)
    }

    func channelActive(context: ChannelHandlerContext) {
        link = core.linkOpened(
            channel: context.channel, role: role, transport: transport, endpoint: endpoint,
            intendedPeer: intendedPeer, security: security)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        var buffer = unwrapInboundIn(data)
        guard !framing else {
            keep(&buffer, context: context)  // the read being framed takes these bytes after its own
            return
        }
        framing = true
        defer { framing = false }
        do {
            if var pending = unframed {
                // Only the bytes the kept frame lacks are copied to it; the frames after it are framed where they
                // were read, so that their payloads are slices of the read buffer, not copies.
                unframed = nil
                complete(&pending, from: &buffer)
                guard try deliverFrames(from: &pending, context: context) else { return endRead() }
                if pending.readableBytes > 0 {
                    pending.writeBuffer(&buffer)  // still incomplete: this read was all of it
                    buffer = pending
                }
            }
            while true {
                guard try deliverFrames(from: &buffer, context: context) else { return endRead() }
                guard var later = unframed else { break }
                unframed = nil
                buffer.writeBuffer(&later)
            }
        } catch {
            failed = true
            endRead()
            errorCaught(context: context, error: error)
            return
        }
        endRead()
        keep(&buffer, context: context, frameLength: decoder.pendingLength(in: buffer))
    }

    /// Hands the core every whole frame at the start of `buffer`; false when the link closed meanwhile (what is left
    /// is not counted, and the peer resends it on its next link).
    private func deliverFrames(from buffer: inout ByteBuffer, context: ChannelHandlerContext) throws -> Bool {
        while let frame = try decoder.next(from: &buffer) {
            if let link {
                switch frame {
                case .message(let message): core.received(message, on: link)
                case .data(let payload): core.receivedData(payload, on: link)
                }
            }
            guard !failed, context.channel.isActive else { return false }
        }
        return true
    }

    /// Moves to `pending`, an incomplete frame (or sealed record), the bytes it lacks from the start of `buffer`, and
    /// no more: while its header is incomplete, enough for any header first.
    private func complete(_ pending: inout ByteBuffer, from buffer: inout ByteBuffer) {
        while buffer.readableBytes > 0 {
            let lacking: Int
            if let length = decoder.pendingLength(in: pending) {
                lacking = length - pending.readableBytes
            } else if pending.readableBytes < Self.longestHeader {
                lacking = Self.longestHeader - pending.readableBytes
            } else {
                return  // a header that does not decode: the decoder says what is wrong with it
            }
            guard lacking > 0 else { return }
            var head = buffer.readSlice(length: min(lacking, buffer.readableBytes))!
            pending.writeBuffer(&head)
        }
    }

    /// Bytes that hold any frame's or record's header (a frame's length is a varint of at most 4 bytes, a record's 2).
    private static var longestHeader: Int { 8 }

    /// The data messages of this read go to the subscribers together.
    private func endRead() {
        core.endOfRead(on: link)
    }

    /// Keeps what is left of `buffer` (copied, so that the channel reuses its read buffer) after what is kept. With
    /// the length of the incomplete frame it starts with, room for all of it is made at once.
    private func keep(_ buffer: inout ByteBuffer, context: ChannelHandlerContext, frameLength: Int? = nil) {
        guard buffer.readableBytes > 0 else { return }
        if unframed == nil {
            unframed = context.channel.allocator.buffer(capacity: max(buffer.readableBytes, frameLength ?? 0, 1_024))
        }
        unframed!.writeBuffer(&buffer)
    }

    func channelInactive(context: ChannelHandlerContext) {
        unframed = nil
        if let link { core.linkClosed(link) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let link { core.linkFailed(link, error: error) }
        context.close(promise: nil)
    }
}

/// Hands received datagrams to the session's datagram router.
final class DatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let router: DatagramRouter

    init(router: DatagramRouter) {
        self.router = router
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        router.received(envelope.data, from: envelope.remoteAddress)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A datagram socket reports, for example, ICMP port unreachable from an earlier send; it stays open.
        router.socketError(error)
    }
}
