import NIOCore
import NIOWebSocket

/// What one page is sent, written on its connection's event loop: frames encoded once for every page
/// (`PageBroadcast`) go out at once while the socket takes them; while it does not (a page that reads slowly, or not
/// at all), they wait coalesced in a `PageQueue`, one per thing the page shows, and go when the socket drains.
/// Nothing goes before the page's snapshot, which comes first.
final class PageWriter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var context: ChannelHandlerContext?
    private var started = false
    private var waiting = PageQueue<ByteBuffer>()

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        waiting = PageQueue()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        writeWaiting()
        context.fireChannelWritabilityChanged()
    }

    /// The page's first message, then whatever waited for it.
    func start(with snapshot: ByteBuffer) {
        guard !started, let context else { return }
        started = true
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: snapshot)), promise: nil)
        writeWaiting()
        context.flush()
    }

    /// Queues `text`, the state of `kind`, in place of the same thing's that waits; ``writeWaiting()`` sends.
    func enqueue(_ text: ByteBuffer, as kind: PageMessage.Kind) {
        guard context != nil else { return }
        waiting.put(text, as: kind)
    }

    /// Writes what waits, once the snapshot went and while the socket takes it.
    func writeWaiting() {
        guard started, let context, context.channel.isWritable, !waiting.isEmpty else { return }
        for text in waiting.take() {
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: text)), promise: nil)
        }
        context.flush()
    }
}
