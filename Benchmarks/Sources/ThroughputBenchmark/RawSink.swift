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
        try await client.writeFrames(count: count, size: size, batch: batch)
        try await counted.get()
    }

    func close() async {
        try? await client.close()
        try? await server.close()
    }
}
