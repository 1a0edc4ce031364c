import NIOCore

/// Counts the bytes a connection brings until `total` (after TLS, the plaintext), for the baselines.
final class ByteCounter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let total: Int
    private let done: EventLoopPromise<Void>
    private var seen = 0

    init(total: Int, done: EventLoopPromise<Void>) {
        self.total = total
        self.done = done
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        seen += unwrapInboundIn(data).readableBytes
        if seen >= total { done.succeed() }
    }
}
