import CBluetooth
import LanSession
import LanSessionRFCOMM
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// Finds the session's peers over Bluetooth LE, with no LAN: advertises this node (``LEAdvertisement``) and scans for
/// others, through the kernel's management interface on one adapter, and feeds what it finds to the session, which
/// dials them on ``L2CAPTransport``.
///
/// Each device's address is a discovery record of its own (`le:ADDRESS`): a device no longer reported for
/// `lostAfter` is withdrawn from the session (`vanished(record:)`), which stops dialling it. ``LEDiscoveryState``
/// decides; this type only opens the socket, carries the actions out and keeps the clock. The management interface
/// needs `CAP_NET_ADMIN`: without it the kernel refuses to advertise and to scan, and `report` says so once. It is a
/// `Service` of swift-service-lifecycle: in a `ServiceGroup`, it runs until the group's graceful shutdown.
public final class LEDiscovery: Service {
    private let session: Session
    private let adapter: RFCOMMTransport.Adapter
    private let configuration: LEDiscoveryState.Configuration
    private let loop: any EventLoop
    private let logger: Logger
    private let report: @Sendable (String) -> Void

    /// Creates the discovery of `session` on `adapter`, advertising `psm` (the LE transport's). A scan runs for
    /// `rescanInterval` before it starts anew; a device not seen for `lostAfter` is lost. What an operator may want
    /// to know goes to `report` (the discovery itself logs at debug).
    public init(
        session: Session, adapter: RFCOMMTransport.Adapter, psm: Int, rescanInterval: Duration = .seconds(3),
        lostAfter: Duration = .seconds(10), eventLoop: (any EventLoop)? = nil,
        logger: Logger = Logger(label: "lansession.le-discovery"),
        report: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.session = session
        self.adapter = adapter
        var configuration = LEDiscoveryState.Configuration(
            localPeer: session.peerID,
            advertisement: LEAdvertisement(
                peerID: session.peerID, psm: psm,
                sessionTag: LEAdvertisement.sessionTag(session.configuration.sessionName)))
        configuration.rescanInterval = rescanInterval
        configuration.lostAfter = lostAfter
        self.configuration = configuration
        self.loop = eventLoop ?? MultiThreadedEventLoopGroup.singleton.any()
        self.logger = logger
        self.report = report
    }

    /// An event of the socket, or the clock.
    private enum Input: Sendable {
        case packet([UInt8])
        case tick
    }

    /// Advertises and scans until graceful shutdown (in a `ServiceGroup`) or cancellation, then withdraws the
    /// advertisement and stops the scan. Fails at once when the management socket cannot be opened.
    public func run() async throws(SessionError) {
        do {
            try await cancelWhenGracefulShutdown { try await self.advertiseAndScan() }
        } catch let error as SessionError {
            throw error
        } catch {
            // Nothing else is thrown: a graceful shutdown ends the scan as a cancellation does.
        }
    }

    /// Advertises and scans until cancelled, then withdraws the advertisement and stops the scan.
    private func advertiseAndScan() async throws(SessionError) {
        guard adapter.name.hasPrefix("hci"), let index = UInt16(adapter.name.dropFirst(3)) else {
            throw SessionError(.invalidConfiguration, "adapter \(adapter.name) has no controller index")
        }
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .bufferingNewest(256))
        let channel: any Channel
        do {
            let fd = try Self.controlSocket()
            channel = try await NIOPipeBootstrap(group: loop)
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 4096))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(PacketReader(continuation))
                    }
                }
                .takingOwnershipOfDescriptor(inputOutput: fd)
                .get()
        } catch let error as SessionError {
            throw error
        } catch {
            throw SessionError(.io, "cannot use the Bluetooth management socket: \(error)")
        }
        logger.debug(
            "LE discovery on \(adapter.name)",
            metadata: ["peer": "\(session.peerID)", "psm": "\(configuration.advertisement.psm)"])
        var state = LEDiscoveryState(configuration)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(500))
                    continuation.yield(.tick)
                }
            }
            await perform(state.start(), on: channel, index: index)
            for await input in inputs {
                let actions: [LEDiscoveryState.Action]
                switch input {
                case .tick:
                    actions = state.tick(now: .now)
                case .packet(let bytes):
                    guard let event = ManagementPacket.Event(bytes, index: index) else { continue }
                    actions = state.receive(event, now: .now)
                }
                await perform(actions, on: channel, index: index)
            }
            group.cancelAll()
        }
        // Cancelled: the advertisement goes and the scan stops, each command written alone.
        for command in state.stopCommands {
            try? await channel.writeAndFlush(ByteBuffer(bytes: command.encoded(index: index))).get()
        }
        try? await channel.close().get()
        for record in state.sightings.keys { try? await session.vanished(record: LEDiscoveryState.record(record)) }
    }

    private func perform(_ actions: [LEDiscoveryState.Action], on channel: any Channel, index: UInt16) async {
        for action in actions {
            switch action {
            case .send(let command):
                logger.trace("management command", metadata: ["command": "\(command)"])
                channel.writeAndFlush(ByteBuffer(bytes: command.encoded(index: index)), promise: nil)
            case .discovered(let peer, let endpoint, let record):
                logger.debug("LE: found \(peer) at \(endpoint)")
                try? await session.discovered([endpoint], peerID: peer, name: "", record: record)
            case .vanished(let record):
                logger.debug("LE: \(record) no longer seen")
                try? await session.vanished(record: record)
            case .report(let text):
                logger.debug("\(text)")
                report(text)
            }
        }
    }

    /// A raw HCI socket on the management channel of no controller in particular.
    private static func controlSocket() throws(SessionError) -> Int32 {
        let fd = Glibc.socket(
            AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            BTPROTO_HCI)
        guard fd >= 0 else { throw BluetoothSockets.error("open a Bluetooth management socket") }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(HCI_DEV_NONE)
        address.hci_channel = UInt16(HCI_CHANNEL_CONTROL)
        guard BluetoothSockets.call(Glibc.bind, fd, address) == 0 else {
            let failure = BluetoothSockets.error("bind the Bluetooth management channel")
            close(fd)
            throw failure
        }
        return fd
    }

    /// Hands each packet read to the discovery's loop.
    private final class PacketReader: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        private let continuation: AsyncStream<Input>.Continuation

        init(_ continuation: AsyncStream<Input>.Continuation) { self.continuation = continuation }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            continuation.yield(.packet(Array(buffer.readableBytesView)))
        }

        func channelInactive(context: ChannelHandlerContext) {
            continuation.finish()
            context.fireChannelInactive()
        }
    }
}
