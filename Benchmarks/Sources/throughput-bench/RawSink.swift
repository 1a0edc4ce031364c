import NIOCore
import NIOPosix

/// The baseline: plain SwiftNIO TCP on 127.0.0.1, a client writing length-prefixed frames and a server counting
/// their bytes, with one flush per batch of frames written in one go (what a careful app does).
final class RawSink: Sendable {
    private let server: any Channel
    private let client: any Channel
    private let counted: EventLoopFuture<Void>

    private init(server: any Channel, client: any Channel, counted: EventLoopFuture<Void>) {
        self.server = server
        self.client = client
        self.counted = counted
    }

    /// A server expecting `total` bytes, and a client connected to it.
    static func start(group: MultiThreadedEventLoopGroup, expecting total: Int) async throws -> RawSink {
        let serverLoop = group.next()
        let done = serverLoop.makePromise(of: Void.self)
        let server = try await ServerBootstrap(group: serverLoop)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteCounter(total: total, done: done))
                }
            }
            .bind(host: ThroughputBench.loopback, port: 0).get()
        let client = try await ClientBootstrap(group: group.next())
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connect(to: server.localAddress!).get()
        return RawSink(server: server, client: client, counted: done.futureResult)
    }

    /// Writes `count` frames of `size` bytes, flushing every `batch` frames, and waits until the server counted all.
    func send(count: Int, size: Int, batch: Int) async throws {
        let client = self.client
        try await client.eventLoop.submit {
            var frame = client.allocator.buffer(capacity: size + 4)
            frame.writeInteger(UInt32(size))
            frame.writeRepeatingByte(7, count: size)
            for index in 1...count {
                client.write(frame, promise: nil)
                if index % batch == 0 || index == count { client.flush() }
            }
        }.get()
        try await counted.get()
    }

    func close() async {
        try? await client.close()
        try? await server.close()
    }
}

/// Counts the bytes a connection brings until `total`.
private final class ByteCounter: ChannelInboundHandler {
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
