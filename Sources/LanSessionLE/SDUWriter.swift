import NIOCore

/// Writes a byte stream on a `SOCK_SEQPACKET` socket (an L2CAP channel), whose every write is one SDU of at most the
/// peer's MTU: a longer write fails with EMSGSIZE.
///
/// SwiftNIO gathers the writes pending on a socket into one `writev(2)`, which on such a socket would be one SDU of
/// their total size. So this handler hands SwiftNIO one piece at a time, of at most `mtu` bytes, and the next only when
/// the last is written: the link's frames become a sequence of SDUs whose boundaries mean nothing (the receiver reads
/// them as one stream, docs/wire-format.md 4.1). A write's promise completes with its last piece.
///
/// Closing lingers: a close of this side waits until the peer closes (it does on a `bye`) or ``linger`` passes. Closing
/// an L2CAP channel sends the disconnection at once on the LE signalling channel, and the kernel drops the channel's
/// SDUs still waiting for the controller's buffers or for credits: a `bye` written just before was lost that way about
/// one time in three in the lab. While it lingers, what the peer sends is dropped.
final class SDUWriter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How long a close of this side waits for the peer's.
    static let linger = TimeAmount.milliseconds(500)

    /// The peer's MTU: the largest SDU it takes.
    let mtu: Int
    /// Pieces not yet handed on, each with the promise of the write it ends (nil for the others).
    private var queue = CircularBuffer<(piece: ByteBuffer, promise: EventLoopPromise<Void>?)>()
    /// Pieces queued before the last flush: those a flush lets go.
    private var flushed = 0
    /// Whether a piece is with SwiftNIO.
    private var writing = false
    private var failure: (any Error)?
    /// The close this side asked for, while it lingers.
    private var lingering: (promise: EventLoopPromise<Void>?, deadline: Scheduled<Void>)?

    init(mtu: Int) {
        precondition(mtu > 0, "an MTU is at least one byte")
        self.mtu = mtu
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if let failure {
            promise?.fail(failure)
            return
        }
        var buffer = unwrapOutboundIn(data)
        guard buffer.readableBytes > 0 else {
            promise?.succeed()  // no SDU: an empty one would read as the end of the stream
            return
        }
        while buffer.readableBytes > 0 {
            let piece = buffer.readSlice(length: min(mtu, buffer.readableBytes))!
            queue.append((piece, buffer.readableBytes == 0 ? promise : nil))
        }
    }

    func flush(context: ChannelHandlerContext) {
        flushed = queue.count
        writeNext(context: context)
    }

    /// Hands the next flushed piece to SwiftNIO unless one is there already.
    private func writeNext(context: ChannelHandlerContext) {
        guard !writing, flushed > 0, let (piece, promise) = queue.popFirst() else { return }
        flushed -= 1
        writing = true
        let written = context.eventLoop.makePromise(of: Void.self)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        written.futureResult.whenComplete { result in
            let (writer, context) = bound.value
            writer.writing = false
            switch result {
            case .success:
                promise?.succeed()
                writer.writeNext(context: context)
            case .failure(let error):
                promise?.fail(error)
                writer.failAll(error)
            }
        }
        context.writeAndFlush(wrapOutboundOut(piece), promise: written)
    }

    private func failAll(_ error: any Error) {
        failure = error
        flushed = 0
        while let (_, promise) = queue.popFirst() { promise?.fail(error) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failAll(ChannelError.ioOnClosedChannel)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, context.channel.isActive else {
            if mode == .all { failAll(ChannelError.ioOnClosedChannel) }
            return context.close(mode: mode, promise: promise)
        }
        if let lingering {
            // Already closing: this close completes with that one.
            if let promise { lingering.promise?.futureResult.cascade(to: promise) ?? promise.succeed() }
            return
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let deadline = context.eventLoop.scheduleTask(in: Self.linger) {
            let (writer, context) = bound.value
            writer.finishClose(context: context)
        }
        lingering = (promise ?? context.eventLoop.makePromise(), deadline)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard lingering == nil else { return }  // closing: the link is done with what the peer says
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let lingering {
            self.lingering = nil
            lingering.deadline.cancel()
            failAll(ChannelError.ioOnClosedChannel)
            lingering.promise?.succeed()
        }
        context.fireChannelInactive()
    }

    /// Closes for good after lingering.
    private func finishClose(context: ChannelHandlerContext) {
        guard let lingering else { return }
        self.lingering = nil
        failAll(ChannelError.ioOnClosedChannel)
        context.close(mode: .all, promise: lingering.promise)
    }
}
