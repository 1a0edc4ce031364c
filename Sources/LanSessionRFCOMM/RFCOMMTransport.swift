import CBluetooth
import LanSession
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// Bluetooth classic: RFCOMM sockets of the Linux kernel (AF_BLUETOOTH, BTPROTO_RFCOMM), through BlueZ's headers.
///
/// It listens on a channel of one adapter and dials a peer's adapter address and channel; an endpoint's host is a
/// Bluetooth address ("AA:BB:CC:DD:EE:FF") and its port the RFCOMM channel (1...30). The sockets are non-blocking and
/// run on the session's event loop like the LAN links: the listening socket and every connected one are adopted by
/// SwiftNIO, and a dial's connect completes in the kernel while the loop polls for it every few milliseconds. RFCOMM
/// carries the reliable stream; it carries no datagrams, so a peer's unreliable messages go on its link.
public struct RFCOMMTransport: Transport {
    /// The transport's name in endpoints, priorities and listings.
    public static let name = "rfcomm"
    /// RFCOMM channels are 1...30.
    public static let channels: ClosedRange<Int> = 1...30

    /// A Bluetooth adapter of this machine.
    public struct Adapter: Hashable, Sendable {
        /// Its name, e.g. "hci0".
        public var name: String
        /// Its address, e.g. "00:AA:01:00:00:00".
        public var address: String
    }

    /// The adapter it listens on and dials from.
    public let adapter: Adapter
    /// The channel it listens on.
    public let channel: Int
    /// How long a dial may take.
    public var connectTimeout: Duration

    public var name: String { Self.name }
    public var carriesDatagrams: Bool { false }

    /// Creates the transport on `adapter` (a name such as "hci0"; nil: the first adapter), listening on `channel`.
    /// Fails with one clear sentence when the kernel has no Bluetooth or there is no such adapter.
    public init(adapter: String? = nil, channel: Int, connectTimeout: Duration = .seconds(5)) throws(SessionError) {
        guard Self.channels.contains(channel) else {
            throw SessionError(.invalidConfiguration, "RFCOMM channels are 1...30, not \(channel)")
        }
        self.adapter = try Self.adapter(named: adapter)
        self.channel = channel
        self.connectTimeout = connectTimeout
    }

    /// The adapter named `name` (or with that address); nil: the first. Fails with one sentence when there is none.
    public static func adapter(named name: String?) throws(SessionError) -> Adapter {
        let adapters = try adapters()
        guard !adapters.isEmpty else {
            throw SessionError(.io, "no Bluetooth adapter: the kernel has Bluetooth but no controller is registered")
        }
        guard let name else { return adapters[0] }
        guard let found = adapters.first(where: { $0.name == name || $0.address == name.uppercased() }) else {
            throw SessionError(
                .invalidConfiguration,
                "no Bluetooth adapter \(name); there are \(adapters.map(\.name).joined(separator: ", "))")
        }
        return found
    }

    /// This machine's Bluetooth adapters, in the order of their numbers. Fails when the kernel has no Bluetooth
    /// (`socket(AF_BLUETOOTH)` gives EAFNOSUPPORT), saying so.
    public static func adapters() throws(SessionError) -> [Adapter] {
        let probe = Glibc.socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard probe >= 0 else {
            let code = errno
            if code == EAFNOSUPPORT {
                throw SessionError(.io, "this kernel has no Bluetooth (socket(AF_BLUETOOTH) gives EAFNOSUPPORT)")
            }
            throw SessionError(.io, "cannot open a Bluetooth socket: \(String(cString: strerror(code)))")
        }
        close(probe)
        var found: [Adapter] = []
        for id in 0..<HCI_MAX_DEV {
            var info = hci_dev_info()
            guard hci_devinfo(Int32(id), &info) == 0 else { continue }
            let name = withUnsafeBytes(of: &info.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            found.append(Adapter(name: name, address: BluetoothSockets.string(info.bdaddr)))
        }
        return found
    }

    // MARK: - Transport

    public func listen(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<(channel: any Channel, port: Int)> {
        let fd: Int32
        do {
            fd = try Self.socket()
            try Self.bind(fd, adapter: adapter.address, channel: channel)  // SwiftNIO calls listen()
        } catch {
            return loop.makeFailedFuture(error)
        }
        let channel = self.channel
        return ServerBootstrap(group: loop)
            .childChannelInitializer { child in Self.adopt(child, then: initializer) }
            .withBoundSocket(fd)
            .map { listener in (listener, channel) }
    }

    public func connect(
        to endpoint: Endpoint, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        guard Self.channels.contains(endpoint.port) else {
            return loop.makeFailedFuture(
                SessionError(.invalidArgument, "RFCOMM channel \(endpoint.port) is not 1...30"))
        }
        let fd: Int32
        do {
            // The address first: a bad one leaves no socket to close.
            let remote = try Self.address(endpoint.host, channel: endpoint.port)
            fd = try Self.socket()
            try Self.bind(fd, adapter: adapter.address, channel: 0)
            try BluetoothSockets.startConnect(fd, to: remote, endpoint: endpoint)
        } catch {
            return loop.makeFailedFuture(error)
        }
        return BluetoothSockets.completeConnect(
            fd, to: endpoint, transport: "RFCOMM", timeout: connectTimeout, on: loop
        ) { fd in
            ClientBootstrap(group: loop)
                .channelInitializer { channel in Self.adopt(channel, then: initializer) }
                .withConnectedSocket(fd)
        }
    }

    public func openDatagrams(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        loop.makeFailedFuture(SessionError(.io, "RFCOMM carries no datagrams"))
    }

    /// This adapter's address and listening channel.
    public func localEndpoint(of listener: any Channel, port: Int) -> Endpoint? {
        Endpoint(transport: name, host: adapter.address, port: channel)
    }

    /// The remote adapter's address: a path of its own for each pair of adapters.
    public func pathAddress(of channel: any Channel) -> String? {
        BluetoothSockets.remoteAddress(of: channel)
    }

    // MARK: - Sockets

    /// Reads the peer's address of an adopted socket (SO_PEERNAME), keeps it in the pipeline, then sets up the link.
    private static func adopt(
        _ channel: any Channel, then initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<Void> {
        guard let options = channel as? any SocketOptionProvider else { return initializer(channel) }
        let peer: EventLoopFuture<sockaddr_rc> = options.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERNAME))
        return peer.flatMapThrowing { remote in
            try channel.pipeline.syncOperations.addHandler(
                BluetoothSockets.RemoteAddressHandler(address: BluetoothSockets.string(remote.rc_bdaddr)))
        }
        .flatMap { initializer(channel) }
    }

    private static func socket() throws(SessionError) -> Int32 {
        let fd = Glibc.socket(
            AF_BLUETOOTH, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            BTPROTO_RFCOMM)
        guard fd >= 0 else { throw BluetoothSockets.error("open an RFCOMM socket") }
        return fd
    }

    private static func bind(_ fd: Int32, adapter: String, channel: Int) throws(SessionError) {
        guard BluetoothSockets.call(Glibc.bind, fd, try address(adapter, channel: channel)) == 0 else {
            let failure = BluetoothSockets.error("bind \(adapter) channel \(channel)")
            close(fd)
            throw failure
        }
    }

    private static func address(_ text: String, channel: Int) throws(SessionError) -> sockaddr_rc {
        var address = sockaddr_rc()
        address.rc_family = sa_family_t(AF_BLUETOOTH)
        address.rc_channel = UInt8(clamping: channel)
        address.rc_bdaddr = try BluetoothSockets.address(text)
        return address
    }

}
