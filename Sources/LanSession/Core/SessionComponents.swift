import Logging
import NIOCore

/// The components of one session, made once from its configuration: the core routes between them, and ``Session``
/// keeps the same handles to ask the ones it talks to directly (peers, dialler, invitations, sockets, streams,
/// trust) without going through the core. They live on the session's loop, as the core does.
struct SessionComponents {
    let admission: Admission
    let links: LinkTable
    let writer: LinkWriter
    let peers: PeerTable
    let dialler: Dialler
    let keeper: PathKeeper<SessionCore>
    let invitations: Invitations
    let datagrams: DatagramRouter
    let sockets: SessionSockets
    let pings: Pings
    let streams: StreamMultiplexer
    let trust: TrustKeeper
    let events: SessionEventQueue
    let sender: PeerSender
    let reporter: PeerReporter
    let members: MembersExchange
    let receipts: DurableReceipts

    /// The entries of every table of the components that is keyed by a peer, a link, a transfer, a stream, a ping, a
    /// pairing or an invitation, by name: each must come back to what it was once its keys are gone
    /// (``Session/tableSizes()``).
    var tableSizes: [String: Int] {
        let tables = [
            links.tableSizes, writer.tableSizes, peers.tableSizes, dialler.tableSizes, invitations.tableSizes,
            datagrams.tableSizes, pings.tableSizes, streams.tableSizes, trust.tableSizes, members.tableSizes,
        ]
        return tables.reduce(into: [:]) { sizes, table in sizes.merge(table) { $1 } }
    }

    init(
        configuration: SessionConfiguration, trusted: TrustedDevices, loop: any EventLoop, transports: [any Transport],
        logger: Logger, events fanout: EventFanout<SessionEvent>, stateChanges: PeerStateChanges = PeerStateChanges()
    ) {
        events = SessionEventQueue(fanout: fanout)
        trust = TrustKeeper(
            admission: configuration.admission, identity: configuration.identity, trusted: trusted,
            store: configuration.trustedDevicesFile.map { TrustStore(path: $0) }, logger: logger)
        let admission = Admission(configuration: configuration)
        self.admission = admission
        links = LinkTable(
            maxUnproven: configuration.maxUnprovenLinks,
            maxUnprovenPerAddress: configuration.maxUnprovenLinksPerAddress)
        writer = LinkWriter(loop: loop, logger: logger)
        peers = PeerTable(
            replayBufferMessages: configuration.replayBufferMessages,
            replayBufferBytes: configuration.replayBufferBytes,
            pathSelector: PathSelector(
                priority: configuration.transportPriority, silence: configuration.failoverSilence.timeAmount,
                hysteresis: configuration.pathHysteresis.timeAmount),
            stateChanges: stateChanges)
        dialler = Dialler(
            loop: loop, logger: logger, localPeer: configuration.peerID,
            initialDelay: configuration.reconnectInitialDelay, maximumDelay: configuration.reconnectMaximumDelay,
            standbyMaximumDelay: configuration.standbyRedialMaximumDelay)
        invitations = Invitations(loop: loop, admission: admission)
        keeper = PathKeeper(
            localPeer: configuration.peerID, livenessTimeout: configuration.livenessTimeout.timeAmount, loop: loop,
            logger: logger)
        let pings = Pings(loop: loop)
        self.pings = pings
        datagrams = DatagramRouter(
            logger: logger, probeTimeout: configuration.datagramProbeTimeout.timeAmount,
            heartbeatInterval: configuration.heartbeatInterval.timeAmount,
            livenessTimeout: configuration.livenessTimeout.timeAmount,
            micros: { pings.micros($0) })
        sockets = SessionSockets(
            loop: loop, logger: logger, host: configuration.host, transports: transports, datagrams: datagrams)
        streams = StreamMultiplexer(
            loop: loop, logger: logger,
            inbox: configuration.inbox.map { Inbox(directory: $0, gate: configuration.inboxGate) },
            acceptsByteStreams: configuration.acceptsByteStreams)
        sender = PeerSender(
            loop: loop, logger: logger, writer: writer, peers: peers, datagrams: datagrams, streams: streams,
            pings: pings, events: events,
            durable: DurableLog(directory: configuration.durableDirectory, loop: loop, logger: logger))
        reporter = PeerReporter(
            peers: peers, dialler: dialler, datagrams: datagrams, events: events,
            carrierOfDatagrams: transports.first?.name ?? "")
        members = MembersExchange(
            localPeer: configuration.peerID, interval: configuration.membersExchangeInterval.timeAmount,
            logger: logger, peers: peers, dialler: dialler, writer: writer, datagrams: datagrams, reporter: reporter,
            loop: loop, store: configuration.membersFile.map { MembersStore(path: $0) })
        receipts = DurableReceipts(directory: configuration.durableDirectory, logger: logger)
        sender.sendKeptDurable()
    }
}
