import CBluetooth
import LanSession
import LanSessionRFCOMM
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// Bluetooth Low Energy: L2CAP connection-oriented channels with credit-based flow control (LE CoC) of the Linux
/// kernel (AF_BLUETOOTH, BTPROTO_L2CAP, `SOCK_SEQPACKET`), through BlueZ's headers.
///
/// It listens on a dynamic LE PSM (0x0080...0x00FF) of one adapter, as an LE public address, and dials a peer's
/// adapter address and PSM; an endpoint's host is the Bluetooth address and its port the PSM. The kernel makes the
/// LE connection itself (it scans for the peer's connectable advertising, then connects). Each write on the socket is
/// one SDU of at most the peer's MTU, and each read one SDU: the link's byte stream goes as a sequence of SDUs (the
/// ``SDUWriter`` cuts it at the peer's MTU), read with a buffer of this side's MTU, so that no SDU is ever cut short.
/// The sockets are non-blocking and adopted by SwiftNIO on the session's loop, as RFCOMM's are. LE carries the
/// reliable stream; it carries no datagrams, so a peer's unreliable messages go on its link.
public struct L2CAPTransport: Transport {
    /// The transport's name in endpoints, priorities and listings.
    public static let name = "le"
    /// Dynamic LE PSMs, the ones an application may take (Bluetooth Core, Vol 3, Part A, 4.22).
    public static let psms: ClosedRange<Int> = 0x0080...0x00FF
    /// The PSM sessiond listens on unless told otherwise.
    public static let defaultPSM = 0x00C5
    /// The largest SDU this side takes (and the read buffer of a link): LE CoC's limit.
    public static let mtu = 65_535

    /// The adapter it listens on and dials from.
    public let adapter: RFCOMMTransport.Adapter
    /// The PSM it listens on.
    public let psm: Int
    /// How long a dial may take (the kernel scans for the peer's advertising first).
    public var connectTimeout: Duration

    public var name: String { Self.name }
    public var carriesDatagrams: Bool { false }

    /// Creates the transport on `adapter` (a name such as "hci0"; nil: the first adapter), listening on `psm`.
    /// Fails with one clear sentence when the kernel has no Bluetooth or there is no such adapter.
    public init(adapter: String? = nil, psm: Int, connectTimeout: Duration = .seconds(10)) throws(SessionError) {
        guard Self.psms.contains(psm) else {
            throw SessionError(.invalidConfiguration, "LE PSMs are 0x80...0xFF (128...255), not \(psm)")
        }
        self.adapter = try RFCOMMTransport.adapter(named: adapter)
        self.psm = psm
        self.connectTimeout = connectTimeout
    }

    // MARK: - Transport

    public func listen(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<(channel: any Channel, port: Int)> {
        let fd: Int32
        do {
            fd = try Self.socket()
            try Self.bind(fd, adapter: adapter.address, psm: psm)  // SwiftNIO calls listen()
        } catch {
            return loop.makeFailedFuture(error)
        }
        let psm = self.psm
        return ServerBootstrap(group: loop)
            .childChannelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Self.mtu))
            .childChannelInitializer { child in Self.adopt(child, then: initializer) }
            .withBoundSocket(fd)
            .map { listener in (listener, psm) }
    }

    public func connect(
        to endpoint: Endpoint, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        guard Self.psms.contains(endpoint.port) else {
            return loop.makeFailedFuture(
                SessionError(.invalidArgument, "LE PSM \(endpoint.port) is not 0x80...0xFF (128...255)"))
        }
        let fd: Int32
        do {
            // The address first: a bad one leaves no socket to close.
            let remote = try Self.address(endpoint.host, psm: endpoint.port)
            fd = try Self.socket()
            try Self.bind(fd, adapter: adapter.address, psm: 0)
            try BluetoothSockets.startConnect(fd, to: remote, endpoint: endpoint)
        } catch {
            return loop.makeFailedFuture(error)
        }
        return BluetoothSockets.completeConnect(
            fd, to: endpoint, transport: "LE L2CAP", timeout: connectTimeout, on: loop
        ) { fd in
            ClientBootstrap(group: loop)
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Self.mtu))
                .channelInitializer { channel in Self.adopt(channel, then: initializer) }
                .withConnectedSocket(fd)
        }
    }

    public func openDatagrams(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        loop.makeFailedFuture(SessionError(.io, "LE L2CAP carries no datagrams"))
    }

    /// This adapter's address and listening PSM.
    public func localEndpoint(of listener: any Channel, port: Int) -> Endpoint? {
        Endpoint(transport: name, host: adapter.address, port: psm)
    }

    /// The remote adapter's address: a path of its own for each pair of adapters.
    public func pathAddress(of channel: any Channel) -> String? {
        BluetoothSockets.remoteAddress(of: channel)
    }

    // MARK: - Sockets

    /// Reads the peer's address (SO_PEERNAME) and its MTU (BT_SNDMTU) of an adopted socket, puts the SDU writer for
    /// that MTU and the address in the pipeline, then sets up the link.
    private static func adopt(
        _ channel: any Channel, then initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<Void> {
        guard let options = channel as? any SocketOptionProvider else { return initializer(channel) }
        let peer: EventLoopFuture<sockaddr_l2> = options.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERNAME))
        let mtu: EventLoopFuture<UInt16> = options.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_BLUETOOTH), name: SocketOptionName(BT_SNDMTU))
        return peer.and(mtu).flatMapThrowing { remote, mtu in
            guard mtu > 0 else { throw SessionError(.io, "the LE L2CAP channel has no send MTU") }
            try channel.pipeline.syncOperations.addHandlers(
                SDUWriter(mtu: Int(mtu)),
                BluetoothSockets.RemoteAddressHandler(address: BluetoothSockets.string(remote.l2_bdaddr)))
        }
        .flatMap { initializer(channel) }
    }

    /// A non-blocking L2CAP socket.
    private static func socket() throws(SessionError) -> Int32 {
        let fd = Glibc.socket(
            AF_BLUETOOTH,
            Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            BTPROTO_L2CAP)
        guard fd >= 0 else { throw BluetoothSockets.error("open an L2CAP socket") }
        return fd
    }

    /// Binds `fd` to `adapter` as an LE address (and `psm`, 0 for a dial), then sets its receive MTU to ``mtu`` (the
    /// kernel takes an MTU only on a socket bound to an LE address).
    private static func bind(_ fd: Int32, adapter: String, psm: Int) throws(SessionError) {
        guard BluetoothSockets.call(Glibc.bind, fd, try address(adapter, psm: psm)) == 0 else {
            let failure = BluetoothSockets.error("bind \(adapter) PSM \(psm)")
            close(fd)
            throw failure
        }
        var mtu = UInt16(mtu)
        guard setsockopt(fd, SOL_BLUETOOTH, BT_RCVMTU, &mtu, socklen_t(MemoryLayout<UInt16>.size)) == 0 else {
            let failure = BluetoothSockets.error("set the L2CAP receive MTU to \(mtu)")
            close(fd)
            throw failure
        }
    }

    /// An LE public address and PSM (little-endian on the wire and in `sockaddr_l2`).
    private static func address(_ text: String, psm: Int) throws(SessionError) -> sockaddr_l2 {
        var address = sockaddr_l2()
        address.l2_family = sa_family_t(AF_BLUETOOTH)
        address.l2_psm = UInt16(clamping: psm).littleEndian
        address.l2_bdaddr = try BluetoothSockets.address(text)
        address.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
        return address
    }
}
