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
public struct L2CAPTransport: BluetoothSocketTransport {
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

    /// Creates the transport on `adapter` (a name such as "hci0"; nil: the first adapter), listening on `psm`.
    /// Fails with one clear sentence when the kernel has no Bluetooth or there is no such adapter.
    public init(adapter: String? = nil, psm: Int, connectTimeout: Duration = .seconds(10)) throws(SessionError) {
        guard Self.psms.contains(psm) else {
            throw SessionError(.invalidConfiguration, "\(Self.portLabel)s are \(Self.portsLabel), not \(psm)")
        }
        self.adapter = try RFCOMMTransport.adapter(named: adapter)
        self.psm = psm
        self.connectTimeout = connectTimeout
    }

    // MARK: - BluetoothSocketTransport

    package static let label = "LE L2CAP"
    package static let portLabel = "LE PSM"
    package static var ports: ClosedRange<Int> { psms }
    package static let portsLabel = "0x80...0xFF (128...255)"
    package static var readBuffer: Int? { mtu }
    package var listeningPort: Int { psm }

    // MARK: - Sockets

    /// Keeps the peer's address of an adopted socket in the pipeline, reads the peer's MTU (BT_SNDMTU) and puts the
    /// SDU writer for that MTU in the pipeline, then sets up the link.
    package static func adopt(
        _ channel: any Channel, then initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<Void> {
        BluetoothSockets.adopt(channel, peer: { (remote: sockaddr_l2) in remote.l2_bdaddr }) { channel in
            guard let options = channel as? any SocketOptionProvider else { return initializer(channel) }
            let mtu: EventLoopFuture<UInt16> = options.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_BLUETOOTH), name: SocketOptionName(BT_SNDMTU))
            return mtu.flatMapThrowing { mtu in
                guard mtu > 0 else { throw SessionError(.io, "the LE L2CAP channel has no send MTU") }
                try channel.pipeline.syncOperations.addHandler(SDUWriter(mtu: Int(mtu)))
            }
            .flatMap { initializer(channel) }
        }
    }

    /// A non-blocking L2CAP socket bound to `adapter` as an LE address (and `psm`, 0 for a dial), its receive MTU set
    /// to ``mtu`` (the kernel takes an MTU only on a socket bound to an LE address).
    package static func socket(bound adapter: String, port psm: Int) throws(SessionError) -> Int32 {
        let local = try address(adapter, port: psm)
        let fd = Glibc.socket(
            AF_BLUETOOTH,
            Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            BTPROTO_L2CAP)
        guard fd >= 0 else { throw BluetoothSockets.error("open an L2CAP socket") }
        guard BluetoothSockets.call(Glibc.bind, fd, local) == 0 else {
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
        return fd
    }

    /// An LE public address and PSM (little-endian on the wire and in `sockaddr_l2`).
    package static func address(_ text: String, port psm: Int) throws(SessionError) -> sockaddr_l2 {
        var address = sockaddr_l2()
        address.l2_family = sa_family_t(AF_BLUETOOTH)
        address.l2_psm = UInt16(clamping: psm).littleEndian
        address.l2_bdaddr = try BluetoothSockets.address(text)
        address.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
        return address
    }
}
