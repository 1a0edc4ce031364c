import Logging
import NIOCore

/// One central's ATT bearer in a pipeline: hands each PDU read to its ``ATTServer`` and carries out what the server
/// says, and turns ``GATTFace``'s notifications (a user outbound event) into Handle Value Notifications.
///
/// Every PDU goes down as one write, flushed at once; an ``SDUWriter`` below hands SwiftNIO one at a time, since a
/// `SOCK_SEQPACKET` socket would send two gathered writes as one PDU. At most ``GATTFace/maxPendingNotifications``
/// notifications wait for the socket; more are dropped.
final class ATTBearerHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A notification for every subscribed central: one framed message.
    struct Notification: Sendable {
        /// The events characteristic's new value.
        var payload: [UInt8]
    }

    private var server: ATTServer
    private let logger: Logger
    /// Notifications written and not yet taken by the socket.
    private var pending = 0

    init(server: ATTServer, logger: Logger) {
        self.server = server
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let pdu = Array(buffer: unwrapInboundIn(data))
        let mtu = server.mtu
        let subscribed = server.notifying
        switch server.receive(pdu) {
        case .none:
            logger.trace("ATT PDU ignored", metadata: ["opcode": "\(pdu.first ?? 0)"])
        case .respond(let response):
            send(response, context: context)
        case .command(let value, let response):
            logger.trace("GATT command taken", metadata: ["bytes": "\(value.count)"])
            if let response { send(response, context: context) }
        case .refused(let error, let response):
            // Discovery ends on Attribute Not Found: the usual answer, not worth more than a trace.
            if error.code == .attributeNotFound {
                logger.trace("ATT request found nothing", metadata: ["error": "\(error)"])
            } else {
                logger.debug("ATT PDU refused", metadata: ["error": "\(error)"])
            }
            if let response { send(response, context: context) }
        }
        if server.mtu != mtu { logger.debug("ATT MTU exchanged", metadata: ["mtu": "\(server.mtu)"]) }
        if server.notifying != subscribed {
            logger.debug(server.notifying ? "central subscribed to the events" : "central unsubscribed from the events")
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let notification = event as? Notification else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        promise?.succeed()
        guard let pdu = server.notify(notification.payload) else { return }
        guard pending < GATTFace.maxPendingNotifications else {
            logger.trace("notification dropped: the central is behind")
            return
        }
        pending += 1
        let written = context.eventLoop.makePromise(of: Void.self)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in bound.value.pending -= 1 }
        send(pdu, context: context, promise: written)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("ATT bearer failed, closing it", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    /// Writes and flushes one PDU.
    private func send(_ pdu: [UInt8], context: ChannelHandlerContext, promise: EventLoopPromise<Void>? = nil) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: pdu)), promise: promise)
    }
}
