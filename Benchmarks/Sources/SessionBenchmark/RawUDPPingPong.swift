import NIOCore
import NIOPosix

/// The UDP baseline: two plain SwiftNIO datagram channels on 127.0.0.1, one echoing, one round trip at a time.
///
/// The echo side runs on one event loop, the client on the other; both sockets are unconnected and every datagram
/// carries its address, as a session's datagram socket does. A round trip hops from the async caller to the client's
/// loop, makes a promise and a timeout, sends one datagram and flushes; the echo side sends it back to where it came
/// from; the promise succeeds when a datagram of the same size arrives from the echo side, and the caller resumes
/// from `.get()`. There is no header and no decoding.
final class RawUDPPingPong: Sendable {
    private let server: any Channel
    private let client: any Channel
    private let handler: NIOLoopBound<ClientHandler>

    private init(server: any Channel, client: any Channel, handler: NIOLoopBound<ClientHandler>) {
        self.server = server
        self.client = client
        self.handler = handler
    }

    /// Binds both sockets to 127.0.0.1, the echo side on `serverLoop` and the client on `clientLoop`.
    static func start(message: [UInt8], clientLoop: any EventLoop, serverLoop: any EventLoop) async throws -> Self {
        let server = try await DatagramBootstrap(group: serverLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(EchoHandler())
                }
            }
            .bind(host: SessionBench.loopback, port: 0)
            .get()
        do {
            guard let serverAddress = server.localAddress else {
                throw BenchError("raw-udp: the echo socket has no address")
            }
            let client = try await DatagramBootstrap(group: clientLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = ClientHandler(
                            message: channel.allocator.buffer(bytes: message), server: serverAddress,
                            loop: channel.eventLoop)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .bind(host: SessionBench.loopback, port: 0)
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

    /// Sends the datagram and returns once its echo is back; fails after 2 s without it.
    func roundTrip() async throws {
        let handler = self.handler
        try await client.eventLoop.flatSubmit { handler.value.send() }.get()
    }

    /// Closes both sockets.
    func close() async {
        try? await client.close()
        try? await server.close()
    }

    /// The client's end: sends the datagram and waits for one of the same size from the echo side.
    private final class ClientHandler: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        typealias OutboundOut = AddressedEnvelope<ByteBuffer>

        private let envelope: AddressedEnvelope<ByteBuffer>
        private let loop: any EventLoop
        private let waiter: RoundTripWaiter
        private var context: ChannelHandlerContext?

        init(message: ByteBuffer, server: SocketAddress, loop: any EventLoop) {
            self.envelope = AddressedEnvelope(remoteAddress: server, data: message)
            self.loop = loop
            self.waiter = RoundTripWaiter(loop: loop, what: "raw-udp")
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
            waiter.fail(BenchError("raw-udp: the client handler was removed"))
        }

        /// Starts one round trip; on the channel's event loop only.
        func send() -> EventLoopFuture<Void> {
            guard let context, context.channel.isActive else {
                return loop.makeFailedFuture(BenchError("raw-udp: the socket is closed"))
            }
            guard !waiter.isWaiting else {
                return loop.makeFailedFuture(BenchError("raw-udp: a round trip is already under way"))
            }
            let answered = waiter.begin()
            context.writeAndFlush(wrapOutboundOut(envelope), promise: nil)
            return answered
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let echo = unwrapInboundIn(data)
            if echo.remoteAddress == envelope.remoteAddress, echo.data.readableBytes == envelope.data.readableBytes {
                waiter.answered()
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            waiter.fail(BenchError("raw-udp: the socket closed"))
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            waiter.fail(error)
            context.close(promise: nil)
        }
    }

    /// The echo side: sends every datagram back to its sender, at once.
    private final class EchoHandler: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        typealias OutboundOut = AddressedEnvelope<ByteBuffer>

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let datagram = unwrapInboundIn(data)
            let echo = AddressedEnvelope(remoteAddress: datagram.remoteAddress, data: datagram.data)
            context.writeAndFlush(wrapOutboundOut(echo), promise: nil)
        }
    }
}
