import LinkCrypto
import NIOCore
import WireCodec

/// Seals what a link writes once its side of the handshake is done.
///
/// Writes are sealed in pairs: a write waits for the next one, or for the flush, and the two are sealed together, in
/// one buffer and as few records as their bytes need. A large payload written after its frame's header (``LinkWriter``)
/// is so sealed with it in one record, read where it lies, rather than the header in a record of its own.
final class LinkSealingHandler: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let security: LinkSecurity
    /// A write waiting for the next one, to be sealed with it.
    private var held: (buffer: ByteBuffer, promise: EventLoopPromise<Void>?)?

    init(security: LinkSecurity) {
        self.security = security
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard security.isSealing else { return context.write(data, promise: promise) }
        let buffer = unwrapOutboundIn(data)
        guard let (first, firstPromise) = held else {
            held = (buffer, promise)
            return
        }
        held = nil
        let both: EventLoopPromise<Void>?
        switch (firstPromise, promise) {
        case (let one?, let other?):
            one.futureResult.cascade(to: other)
            both = one
        case (let one, nil), (nil, let one):
            both = one
        }
        seal(first, then: buffer, promise: both, context: context)
    }

    func flush(context: ChannelHandlerContext) {
        writeHeld(context: context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        writeHeld(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        held?.promise?.fail(ChannelError.ioOnClosedChannel)
        held = nil
    }

    private func writeHeld(context: ChannelHandlerContext) {
        guard let (buffer, promise) = held else { return }
        held = nil
        seal(buffer, then: nil, promise: promise, context: context)
    }

    private func seal(
        _ buffer: ByteBuffer, then next: ByteBuffer?, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext
    ) {
        do {
            let sealed = try security.seal(buffer, then: next, allocator: context.channel.allocator)
            context.write(wrapOutboundOut(sealed), promise: promise)
        } catch {
            promise?.fail(error)
            context.fireErrorCaught(error)
        }
    }
}
