import NIOCore
import NIOPosix

/// The TCP baseline: a plain SwiftNIO client and echo server on 127.0.0.1 with TCP_NODELAY, one round trip at a time.
///
/// The server (its listener and the one connection it accepts) runs on one event loop, the client on the other. A
/// round trip hops from the async caller to the client's loop, makes a promise and a timeout, writes the message
/// and flushes; the server writes back whatever it reads; the promise succeeds once as many bytes as were sent are
/// back, and the caller resumes from `.get()`. There is no framing and no decoding: bytes in, bytes out.
final class RawTCPPingPong: Sendable {
    private let server: any Channel
    private let client: any Channel
    private let handler: NIOLoopBound<ClientHandler>

    private init(server: any Channel, client: any Channel, handler: NIOLoopBound<ClientHandler>) {
        self.server = server
        self.client = client
        self.handler = handler
    }

    /// Listens on 127.0.0.1 with the server on `serverLoop` and connects to it from `clientLoop`.
    static func start(message: [UInt8], clientLoop: any EventLoop, serverLoop: any EventLoop) async throws -> Self {
        let server = try await ServerBootstrap(group: serverLoop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(EchoHandler())
                }
            }
            .bind(host: SessionBench.loopback, port: 0)
            .get()
        do {
            guard let port = server.localAddress?.port else { throw BenchError("raw-tcp: the listener has no port") }
            let client = try await ClientBootstrap(group: clientLoop)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connectTimeout(.seconds(2))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = ClientHandler(
                            message: channel.allocator.buffer(bytes: message), loop: channel.eventLoop)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .connect(host: SessionBench.loopback, port: port)
                .get()
            let handler = try await client.eventLoop.submit {
                NIOLoopBound(
                    try client.pipeline.syncOperations.handler(type: ClientHandler.self), eventLoop: client.eventLoop)
            }.get()
            return Self(server: server, client: client, handler: handler)
        } catch {
            try? await server.close()
            throw error
        }
    }

    /// Sends the message and returns once its echo is back; fails after 2 s without it.
    func roundTrip() async throws {
        let handler = self.handler
        try await client.eventLoop.flatSubmit { handler.value.send() }.get()
    }

    /// Closes the connection and the listener.
    func close() async {
        try? await client.close()
        try? await server.close()
    }

    /// The client's end: sends the message and counts the bytes that come back.
    private final class ClientHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let message: ByteBuffer
        private let loop: any EventLoop
        private let waiter: RoundTripWaiter
        private var context: ChannelHandlerContext?
        private var echoed = 0

        init(message: ByteBuffer, loop: any EventLoop) {
            self.message = message
            self.loop = loop
            self.waiter = RoundTripWaiter(loop: loop, what: "raw-tcp")
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
            waiter.fail(BenchError("raw-tcp: the client handler was removed"))
        }

        /// Starts one round trip; on the channel's event loop only.
        func send() -> EventLoopFuture<Void> {
            guard let context, context.channel.isActive else {
                return loop.makeFailedFuture(BenchError("raw-tcp: the connection is closed"))
            }
            guard !waiter.isWaiting else {
                return loop.makeFailedFuture(BenchError("raw-tcp: a round trip is already under way"))
            }
            let answered = waiter.begin()
            echoed = 0
            context.writeAndFlush(wrapOutboundOut(message), promise: nil)
            return answered
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            echoed += unwrapInboundIn(data).readableBytes
            if echoed >= message.readableBytes {
                waiter.answered()
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            waiter.fail(BenchError("raw-tcp: the connection closed"))
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            waiter.fail(error)
            context.close(promise: nil)
        }
    }

    /// The server's end: writes back every byte it reads, at once.
    private final class EchoHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.writeAndFlush(data, promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
