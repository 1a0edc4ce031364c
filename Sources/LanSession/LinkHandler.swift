import NIOCore
import WireCodec

/// Hands a link's events to the session core; runs on the core's event loop.
final class LinkHandler: ChannelInboundHandler {
    typealias InboundIn = Message

    private let core: SessionCore
    private let role: LinkStateMachine.Role
    private let transport: any Transport
    private let endpoint: Endpoint?
    private let intendedPeer: PeerID?
    private let security: LinkSecurity?
    private var link: Link?

    init(
        core: SessionCore, role: LinkStateMachine.Role, transport: any Transport, endpoint: Endpoint?,
        intendedPeer: PeerID?, security: LinkSecurity? = nil
    ) {
        self.security = security
        self.core = core
        self.role = role
        self.transport = transport
        self.endpoint = endpoint
        self.intendedPeer = intendedPeer
    }

    func channelActive(context: ChannelHandlerContext) {
        link = core.linkOpened(
            channel: context.channel, role: role, transport: transport, endpoint: endpoint,
            intendedPeer: intendedPeer, security: security)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let link else { return }
        core.received(unwrapInboundIn(data), on: link)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let link { core.linkClosed(link) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let link { core.linkFailed(link, error: error) }
        context.close(promise: nil)
    }
}

/// Hands received datagrams to the session core.
final class DatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let core: SessionCore

    init(core: SessionCore) {
        self.core = core
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        core.datagramReceived(envelope.data, from: envelope.remoteAddress)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A datagram socket reports, for example, ICMP port unreachable from an earlier send; it stays open.
        core.logger.debug("datagram socket: \(error)")
    }
}
