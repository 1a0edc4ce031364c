import NIOCore

/// Writes a byte stream on a `SOCK_SEQPACKET` socket (an L2CAP channel), whose every write is one SDU of at most the
/// peer's MTU: a longer write fails with EMSGSIZE.
///
/// SwiftNIO gathers the writes pending on a socket into one `writev(2)`, which on such a socket would be one SDU of
/// their total size. So this handler hands SwiftNIO one piece at a time, of at most `mtu` bytes, and the next only when
/// the last is written: the link's frames become a sequence of SDUs whose boundaries mean nothing (the receiver reads
/// them as one stream, docs/wire-format.md, "L2CAP LE"). A write's promise completes with its last piece.
final class SDUWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The peer's MTU: the largest SDU it takes.
    let mtu: Int
    /// Pieces not yet handed on, each with the promise of the write it ends (nil for the others).
    private var queue = CircularBuffer<(piece: ByteBuffer, promise: EventLoopPromise<Void>?)>()
    /// Pieces queued before the last flush: those a flush lets go.
    private var flushed = 0
    /// Whether a piece is with SwiftNIO.
    private var writing = false
    private var failure: (any Error)?

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
        if mode == .all { failAll(ChannelError.ioOnClosedChannel) }
        context.close(mode: mode, promise: promise)
    }
}
