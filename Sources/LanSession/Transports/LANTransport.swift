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

    /// Datagrams read per readiness of the datagram socket, at most, in one `recvmmsg` (NIO reads one per `recvmsg`
    /// by default, and reads again until the socket has none: a lone datagram, the round trip's case, cost two calls).
    static let datagramsPerRead = 32
    /// The buffer a `recvmmsg` reads into: a slot of `Wire.maxDatagramLength` rounded up for each datagram.
    static let datagramReadBuffer = datagramsPerRead * 2_048
    /// The datagram socket's receive buffer asked for (the kernel caps it at `net.core.rmem_max`).
    static let datagramReceiveBuffer: SocketOptionValue = 1 << 20

    public var name: String { Self.name }
    public var carriesDatagrams: Bool { true }

    public func listen(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<(channel: any Channel, port: Int)> {
        ServerBootstrap(group: loop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 1_024)  // a burst of connections waits rather than retrying SYNs
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
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
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
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
            // One socket takes every peer's datagrams: a loop that was kept from running (a busy host) drains it in
            // few turns, and a burst waits in the kernel rather than being dropped.
            .channelOption(.datagramVectorReadMessageCount, value: Self.datagramsPerRead)
            .channelOption(.maxMessagesPerRead, value: 1)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Self.datagramReadBuffer))
            .channelOption(.socketOption(.so_rcvbuf), value: Self.datagramReceiveBuffer)
            .channelInitializer(initializer)
            .bind(host: host, port: port)
    }
}
