import CBluetooth
import LanSession
import LanSessionRFCOMM
import Logging
import NIOCore
import NIOPosix
import Synchronization
import WireCodec

#if canImport(Glibc)
    import Glibc
#endif

/// The face a Bluetooth LE central that knows only GATT sees of a device, like a phone's peripheral: a service whose
/// characteristics say who the device is, take the commands of the application behind it, and notify its events
/// (docs/wire-format.md 4.2). The face knows neither: a written value goes to the application's
/// ``GATTCommandTaker``, and the application gives each event's value to ``notify(_:)``.
///
/// It serves the attribute protocol itself, on the kernel's L2CAP ATT fixed channel (CID 4) of one adapter's LE public
/// address, so it needs no Bluetooth daemon. Each accepted socket is one central's ATT bearer: every read one PDU,
/// every write one PDU. The sockets are adopted by SwiftNIO on the loop given to ``start(on:)``; each has its own
/// attribute server (its subscription, its MTU), and its PDUs go down one at a time, so that SwiftNIO never gathers
/// two into one write. A socket's error closes that central alone.
public final class GATTFace: Sendable {
    /// LanSession's GATT service.
    public static let serviceUUID = ATTServer.serviceUUID.description
    /// The identity characteristic (read): UTF-8 text, see ``identityText(peer:name:session:fingerprint:)``.
    public static let identityUUID = ATTServer.identityUUID.description
    /// The command characteristic (write, write without response): one command of the application.
    public static let commandUUID = ATTServer.commandUUID.description
    /// The events characteristic (read, notify): one event of the application per notification.
    public static let eventsUUID = ATTServer.eventsUUID.description
    /// The longest value of a characteristic (`attMaxValueLength`): a longer identity or event is cut there.
    public static let maxValueLength = ATTServer.maxValueLength
    /// The most notifications written to one central that its socket has not taken yet; more are dropped (the
    /// application's next event supersedes them).
    public static let maxPendingNotifications = 32
    /// The L2CAP channel id of the attribute protocol on LE (Bluetooth Core, Vol 3, Part A, 2.1).
    static let attChannel: UInt16 = 0x0004
    /// The read buffer of a bearer: more than the largest PDU this side takes, so that none is cut short.
    static let readBufferSize = 1024

    /// The adapter it serves on.
    public let adapter: RFCOMMTransport.Adapter
    /// What the identity characteristic reads.
    public let identity: String
    /// What Generic Access's Device Name reads.
    public let deviceName: String
    private let logger: Logger
    private let commands: GATTCommandTaker
    private let state = Mutex(State())

    /// The listening socket and the centrals' bearers.
    private struct State {
        var listener: (any Channel)?
        var centrals: [ObjectIdentifier: any Channel] = [:]
        var started = false
        var closed = false
    }

    /// A face on `adapter` whose identity characteristic reads `identity` (UTF-8, at most 512 bytes kept) and whose
    /// Device Name is `deviceName`. `commands` takes each value a central writes to the command characteristic, on
    /// the loop: it must not block.
    public init(
        adapter: RFCOMMTransport.Adapter, identity: String, deviceName: String = "LanSession", logger: Logger,
        commands: @escaping GATTCommandTaker
    ) {
        self.adapter = adapter
        self.identity = identity
        self.deviceName = deviceName
        self.logger = logger
        self.commands = commands
    }

    /// The identity text of docs/wire-format.md 4.2: `peer <peer id> "<name>" session "<session>" fingerprint
    /// <fingerprint>`, names quoted with `\` before a `"` or `\` in them, `-` for no fingerprint.
    public static func identityText(peer: PeerID, name: String, session: String, fingerprint: String?) -> String {
        func quoted(_ text: String) -> String {
            var quoted = "\""
            for character in text {
                if character == "\"" || character == "\\" { quoted.append("\\") }
                quoted.append(character)
            }
            return quoted + "\""
        }
        return "peer \(peer) \(quoted(name)) session \(quoted(session)) fingerprint \(fingerprint ?? "-")"
    }

    /// Listens on the ATT channel of the adapter's LE public address; centrals' bearers run on `loop`. Fails with one
    /// clear sentence when the kernel has no Bluetooth, the channel is taken (a Bluetooth daemon serves GATT there), or
    /// the face was started or closed before.
    public func start(on loop: any EventLoop) async throws(SessionError) {
        try state.withLock { state throws(SessionError) in
            guard !state.started, !state.closed else {
                throw SessionError(.invalidConfiguration, "the GATT face was started or closed already")
            }
            state.started = true
        }
        let fd = try Self.listeningSocket(adapter: adapter.address)
        let listener: any Channel
        do {
            listener = try await ServerBootstrap(group: loop)
                .childChannelOption(
                    .recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Self.readBufferSize)
                )
                .childChannelInitializer { [self] central in adopt(central) }
                .withBoundSocket(fd)  // SwiftNIO calls listen()
                .get()
        } catch {
            throw SessionError(.io, "cannot listen on the ATT channel of \(adapter.name): \(error)")
        }
        let closed = state.withLock { state in
            if !state.closed { state.listener = listener }
            return state.closed
        }
        guard !closed else {
            listener.close(promise: nil)
            throw SessionError(.notRunning, "the GATT face was closed while it started")
        }
        logger.debug("GATT face listening", metadata: ["adapter": "\(adapter.name)", "address": "\(adapter.address)"])
    }

    /// Whether a central is connected: with none, an event need not even be encoded (an application may have one
    /// many times a second).
    public var hasCentrals: Bool { state.withLock { !$0.centrals.isEmpty } }

    /// Sends `payload` (one event of the application) as a notification of the events characteristic to every central
    /// that subscribed; it becomes the characteristic's value for every central connected.
    public func notify(_ payload: [UInt8]) {
        let centrals = state.withLock { Array($0.centrals.values) }
        for central in centrals {
            central.triggerUserOutboundEvent(ATTBearerHandler.Notification(payload: payload), promise: nil)
        }
    }

    /// Stops listening and closes every central's bearer.
    public func close() {
        let channels = state.withLock { state in
            state.closed = true
            let channels = Array(state.centrals.values) + (state.listener.map { [$0] } ?? [])
            state.listener = nil
            state.centrals = [:]
            return channels
        }
        for channel in channels { channel.close(promise: nil) }
        logger.debug("GATT face closed", metadata: ["adapter": "\(adapter.name)"])
    }

    // MARK: - Sockets

    /// Takes an accepted bearer: remembers it until it closes, and sets up its pipeline with the central's address in
    /// the logger's metadata.
    private func adopt(_ central: any Channel) -> EventLoopFuture<Void> {
        let key = ObjectIdentifier(central)
        let taken = state.withLock { state in
            if !state.closed { state.centrals[key] = central }
            return !state.closed
        }
        guard taken else { return central.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        central.closeFuture.whenComplete { [self] _ in
            _ = state.withLock { $0.centrals.removeValue(forKey: key) }
        }
        return Self.remoteAddress(of: central).flatMapThrowing { [self] address in
            var logger = logger
            logger[metadataKey: "central"] = "\(address)"
            let server = ATTServer(identity: identity, deviceName: deviceName, commands: commands)
            try central.pipeline.syncOperations.addHandlers(
                SDUWriter(mtu: ATTServer.serverMTU), ATTBearerHandler(server: server, logger: logger))
            logger.debug("a central connected")
            central.closeFuture.whenComplete { [logger] _ in logger.debug("a central disconnected") }
        }
    }

    /// The central's address (SO_PEERNAME), "unknown" when the socket does not tell.
    private static func remoteAddress(of channel: any Channel) -> EventLoopFuture<String> {
        guard let options = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeSucceededFuture("unknown")
        }
        let peer: EventLoopFuture<sockaddr_l2> = options.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERNAME))
        return peer.map { BluetoothSockets.string($0.l2_bdaddr) }.recover { _ in "unknown" }
    }

    /// A non-blocking `SOCK_SEQPACKET` L2CAP socket bound to the ATT channel of `adapter` as an LE public address.
    private static func listeningSocket(adapter: String) throws(SessionError) -> Int32 {
        var address = sockaddr_l2()
        address.l2_family = sa_family_t(AF_BLUETOOTH)
        address.l2_bdaddr = try BluetoothSockets.address(adapter)
        address.l2_cid = attChannel.littleEndian
        address.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
        let fd = Glibc.socket(
            AF_BLUETOOTH,
            Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            BTPROTO_L2CAP)
        guard fd >= 0 else { throw BluetoothSockets.error("open an L2CAP socket") }
        guard BluetoothSockets.call(Glibc.bind, fd, address) == 0 else {
            let failure = BluetoothSockets.error("bind the ATT channel of \(adapter)")
            Glibc.close(fd)
            throw failure
        }
        return fd
    }
}
