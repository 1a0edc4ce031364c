import NIOCore
import NIOPosix

/// The LAN transport: TCP (with TCP_NODELAY) for the reliable link, UDP on the same port number for datagrams.
public struct LANTransport: Transport {
    /// The transport's name.
    public static let name = "lan"

    /// How long a TCP connect may take.
    public var connectTimeout: Duration

    /// Creates the transport.
    public init(connectTimeout: Duration = .seconds(2)) {
        self.connectTimeout = connectTimeout
    }

    /// Reads grow from 2 KiB up to 256 KiB as traffic needs: small for messages, large for a bulk transfer, so that
    /// a file costs few reads and frames span few of them.
    static let receiveBuffers = AdaptiveRecvByteBufferAllocator(minimum: 512, initial: 2048, maximum: 256 << 10)

    /// Datagrams are read up to 16 at a time in one `recvmmsg`, once per readiness: a lone datagram costs one call
    /// (NIO's default reads again until the socket is empty, a second call that finds nothing), a burst few.
    static let datagramsPerRead = 16
    /// A slot per datagram of the vector read, each larger than the largest datagram (sealed or not).
    static let datagramReceiveBuffers = FixedSizeRecvByteBufferAllocator(capacity: datagramsPerRead * 2_048)

    public var name: String { Self.name }
    public var carriesDatagrams: Bool { true }

    public func listen(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<(channel: any Channel, port: Int)> {
        ServerBootstrap(group: loop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 1_024)  // a burst of connections waits rather than retrying SYNs
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.recvAllocator, value: Self.receiveBuffers)
            .childChannelInitializer(initializer)
            .bind(host: host, port: port)
            .map { channel in (channel, channel.localAddress?.port ?? port) }
    }

    public func connect(
        to endpoint: Endpoint, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        ClientBootstrap(group: loop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.recvAllocator, value: Self.receiveBuffers)
            .connectTimeout(connectTimeout.timeAmount)
            .channelInitializer(initializer)
            .connect(host: endpoint.host, port: endpoint.port)
    }

    public func openDatagrams(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        DatagramBootstrap(group: loop)
            .channelOption(.datagramVectorReadMessageCount, value: Self.datagramsPerRead)
            .channelOption(.maxMessagesPerRead, value: 1)
            .channelOption(.recvAllocator, value: Self.datagramReceiveBuffers)
            .channelInitializer(initializer)
            .bind(host: host, port: port)
    }
}
