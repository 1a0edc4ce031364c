import LanSession
import NIOCore
import NIOPosix

/// A transport on Bluetooth sockets of the Linux kernel (RFCOMM, LE L2CAP): it listens on a port (an RFCOMM channel,
/// an LE PSM) of one adapter and dials a peer's adapter address and port; an endpoint's host is the Bluetooth address
/// and its port the channel or PSM. The sockets are non-blocking and adopted by SwiftNIO on the session's loop. Each
/// transport says how its sockets are made and addressed and what a connected one needs in its pipeline; listening,
/// dialling and the endpoints are this protocol's. None carries datagrams: a peer's unreliable messages go on its link.
package protocol BluetoothSocketTransport: Transport {
    /// The kernel's address of a socket of this transport: `sockaddr_rc`, `sockaddr_l2`.
    associatedtype SocketAddress: Sendable

    /// The transport in errors: "RFCOMM", "LE L2CAP".
    static var label: String { get }
    /// A port in errors: "RFCOMM channel", "LE PSM".
    static var portLabel: String { get }
    /// The ports one may listen on and dial.
    static var ports: ClosedRange<Int> { get }
    /// ``ports`` in errors.
    static var portsLabel: String { get }
    /// The size of every read, for sockets whose reads must take a whole packet; nil: SwiftNIO's.
    static var readBuffer: Int? { get }

    /// The adapter it listens on and dials from.
    var adapter: RFCOMMTransport.Adapter { get }
    /// The port it listens on.
    var listeningPort: Int { get }
    /// How long a dial may take.
    var connectTimeout: Duration { get }

    /// A non-blocking socket bound to `adapter` and `port` (0 for a dial).
    static func socket(bound adapter: String, port: Int) throws(SessionError) -> Int32
    /// The socket address of an adapter's address and a port.
    static func address(_ host: String, port: Int) throws(SessionError) -> SocketAddress
    /// Puts what a connected socket needs in its pipeline (at least the peer's address: ``BluetoothSockets/adopt``),
    /// then sets up the link with `initializer`.
    static func adopt(
        _ channel: any Channel, then initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<Void>
}

extension BluetoothSocketTransport {
    public var carriesDatagrams: Bool { false }

    /// Listens on ``listeningPort`` of ``adapter``: `host` and `port` are the LAN's.
    public func listen(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<(channel: any Channel, port: Int)> {
        let port = listeningPort
        let fd: Int32
        do throws(SessionError) {
            fd = try Self.socket(bound: adapter.address, port: port)  // SwiftNIO calls listen()
        } catch {
            return loop.makeFailedFuture(error)
        }
        var bootstrap = ServerBootstrap(group: loop)
        if let readBuffer = Self.readBuffer {
            bootstrap = bootstrap.childChannelOption(
                .recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: readBuffer))
        }
        return bootstrap.childChannelInitializer { child in Self.adopt(child, then: initializer) }
            .withBoundSocket(fd)
            .map { listener in (listener, port) }
    }

    public func connect(
        to endpoint: Endpoint, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        guard Self.ports.contains(endpoint.port) else {
            return loop.makeFailedFuture(
                SessionError(.invalidArgument, "\(Self.portLabel) \(endpoint.port) is not \(Self.portsLabel)"))
        }
        let fd: Int32
        do throws(SessionError) {
            // The address first: a bad one leaves no socket to close.
            let remote = try Self.address(endpoint.host, port: endpoint.port)
            fd = try Self.socket(bound: adapter.address, port: 0)
            try BluetoothSockets.startConnect(fd, to: remote, endpoint: endpoint)
        } catch {
            return loop.makeFailedFuture(error)
        }
        return BluetoothSockets.completeConnect(
            fd, to: endpoint, transport: Self.label, timeout: connectTimeout, on: loop
        ) { fd in
            var bootstrap = ClientBootstrap(group: loop)
            if let readBuffer = Self.readBuffer {
                bootstrap = bootstrap.channelOption(
                    .recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: readBuffer))
            }
            return bootstrap.channelInitializer { channel in Self.adopt(channel, then: initializer) }
                .withConnectedSocket(fd)
        }
    }

    public func openDatagrams(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        loop.makeFailedFuture(SessionError(.io, "\(Self.label) carries no datagrams"))
    }

    /// This adapter's address and listening port.
    public func localEndpoint(of listener: any Channel, port: Int) -> Endpoint? {
        Endpoint(transport: name, host: adapter.address, port: listeningPort)
    }

    /// The remote adapter's address: a path of its own for each pair of adapters.
    public func pathAddress(of channel: any Channel) -> String? {
        BluetoothSockets.remoteAddress(of: channel)
    }
}
