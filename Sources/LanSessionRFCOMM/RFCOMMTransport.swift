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
public struct RFCOMMTransport: BluetoothSocketTransport {
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

    /// Creates the transport on `adapter` (a name such as "hci0"; nil: the first adapter), listening on `channel`.
    /// Fails with one clear sentence when the kernel has no Bluetooth or there is no such adapter.
    public init(adapter: String? = nil, channel: Int, connectTimeout: Duration = .seconds(5)) throws(SessionError) {
        guard Self.channels.contains(channel) else {
            throw SessionError(.invalidConfiguration, "\(Self.portLabel)s are \(Self.portsLabel), not \(channel)")
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

    // MARK: - BluetoothSocketTransport

    package static let label = "RFCOMM"
    package static let portLabel = "RFCOMM channel"
    package static var ports: ClosedRange<Int> { channels }
    package static let portsLabel = "1...30"
    package static let readBuffer: Int? = nil
    package var listeningPort: Int { channel }

    // MARK: - Sockets

    /// Keeps the peer's address of an adopted socket in the pipeline, then sets up the link.
    package static func adopt(
        _ channel: any Channel, then initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<Void> {
        BluetoothSockets.adopt(channel, peer: { (remote: sockaddr_rc) in remote.rc_bdaddr }, then: initializer)
    }

    /// A non-blocking RFCOMM socket bound to `adapter` and channel `port` (0 for a dial).
    package static func socket(bound adapter: String, port: Int) throws(SessionError) -> Int32 {
        let local = try address(adapter, port: port)
        let fd = Glibc.socket(
            AF_BLUETOOTH, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            BTPROTO_RFCOMM)
        guard fd >= 0 else { throw BluetoothSockets.error("open an RFCOMM socket") }
        guard BluetoothSockets.call(Glibc.bind, fd, local) == 0 else {
            let failure = BluetoothSockets.error("bind \(adapter) channel \(port)")
            close(fd)
            throw failure
        }
        return fd
    }

    /// An adapter's address and an RFCOMM channel.
    package static func address(_ text: String, port: Int) throws(SessionError) -> sockaddr_rc {
        var address = sockaddr_rc()
        address.rc_family = sa_family_t(AF_BLUETOOTH)
        address.rc_channel = UInt8(clamping: port)
        address.rc_bdaddr = try BluetoothSockets.address(text)
        return address
    }
}
