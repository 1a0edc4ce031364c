import LinkCrypto
import Logging
import NIOCore
import WireCodec

/// The state of a running session, confined to one event loop: it holds the session's components and routes between
/// them.
///
/// Every link and the datagram socket live on the same loop as the core, so a message goes from the socket to the
/// session's state without a thread hop or a lock. Public calls reach it through ``Session``, one hop per call. The
/// state lives in components, each with storage of its own; none reads another's, the core carries what one says to
/// another:
/// - ``LinkTable`` (open links, datagram tokens, caps on unproven links) and ``LinkWriter`` (bursts of writes, a
///   peer's sequenced messages numbered and written); each link's protocol is a ``LinkStateMachine``, whose actions
///   the core carries out;
/// - ``LinkGate``: links from their opening until they are a peer's (the hello, caps, the ``Admission``, refusals),
///   and their deadlines;
/// - ``PeerTable``: per peer its links, the active one (its ``PathSelector`` chooses), the ``ReliableChannel``;
///   ``PathKeeper``: a link made its peer's (a restart, a duplicate on its path), activations and failovers (the
///   pair's leader activates, a peer left with no link is lost);
/// - ``Dialler``: where peers are (static, discovered, proven) and the dials to them;
/// - ``MembersExchange``: who is connected to whom; ``Invitations``: invitations both ways;
/// - ``TrustKeeper``: the Noise handshake's steps, the trusted devices, the pairings under way, strangers' links
///   (admission `paired`);
/// - ``DatagramRouter``: the unreliable channel; ``Pings``: the clock of pings, the application's pings;
/// - ``PeerSender``: what goes to peers; ``StreamMultiplexer``: data, streams and resources (into the ``Inbox``);
/// - ``PeerReporter``: the peers' state and links as events, and snapshots;
/// - ``ApplicationRouter``: the applications it carries, which it does not know beyond their message kinds.
final class SessionCore {
    enum RunState: Hashable {
        case idle
        case running
        case stopped
    }

    let configuration: SessionConfiguration
    let loop: any EventLoop
    /// Every transport, the LAN one (which carries datagrams) first.
    private let transports: [any Transport]
    let logger: Logger
    let events: SessionEventQueue
    /// The session this core belongs to, for the handles its events carry.
    private weak var owner: Session?

    private var runState = RunState.idle
    private var ticker: RepeatedTask?
    /// Removes partial files of abandoned transfers from the inbox, hourly (``SessionConfiguration/partialFileLifetime``).
    private var sweeper: RepeatedTask?

    // The components.
    let links: LinkTable
    let writer: LinkWriter
    let peers: PeerTable
    let dialler: Dialler
    let keeper: PathKeeper<SessionCore>
    let invitations: Invitations
    let datagrams: DatagramRouter
    private let sockets: SessionSockets
    let pings: Pings
    let streams: StreamMultiplexer
    private(set) var applications = ApplicationRouter()
    let trust: TrustKeeper
    let sender: PeerSender
    let reporter: PeerReporter
    let gate: LinkGate
    let members: MembersExchange
    let receipts: DurableReceipts

    init(
        configuration: SessionConfiguration, components: SessionComponents, loop: any EventLoop,
        transports: [any Transport], logger: Logger
    ) {
        self.configuration = configuration
        self.loop = loop
        self.transports = transports
        self.logger = logger
        events = components.events
        (links, writer, peers, dialler) = (components.links, components.writer, components.peers, components.dialler)
        (keeper, invitations, datagrams) = (components.keeper, components.invitations, components.datagrams)
        (sockets, pings, streams, trust) = (components.sockets, components.pings, components.streams, components.trust)
        (sender, reporter, members, receipts) = (
            components.sender, components.reporter, components.members, components.receipts
        )
        gate = LinkGate(configuration: configuration, logger: logger, components: components)
        gate.delegate = self
        dialler.delegate = self
        datagrams.delegate = self
        streams.delegate = sender
        sender.delegate = self
        sockets.delegate = self
        trust.delegate = self
        invitations.delegate = self
        keeper.delegate = self
    }

    var localPeer: PeerID { configuration.peerID }

    /// The transport named `name`, if the session runs it.
    func transport(named name: String) -> (any Transport)? {
        transports.first { $0.name == name }
    }

    /// The session this core belongs to, once it is made.
    func owned(by session: Session?) {
        owner = session
    }

    /// Whether the session runs now (started, not stopping).
    var isRunningNow: Bool { runState == .running }

    /// Whether the session has not stopped (for the applications).
    var isRunning: Bool { runState != .stopped }

    /// Starts the session unless it started already.
    func startIfIdle() -> EventLoopFuture<Void> {
        runState == .idle ? start().map { _ in } : loop.makeSucceededVoidFuture()
    }

    /// Runs without opening the sockets: a core on an embedded loop, whose links a test makes itself.
    func runWithoutSockets() {
        runState = .running
    }

    /// Adds an application (before the start).
    func add(_ application: any SessionApplication) throws(SessionError) {
        guard runState == .idle else {
            throw SessionError(.invalidArgument, "applications are added before the session starts")
        }
        try applications.add(application)
    }

    func securityStatistics() -> SecurityStatistics {
        SecurityStatistics(
            encrypted: configuration.isEncrypted, failedHandshakes: gate.failedHandshakes,
            droppedDatagrams: datagrams.dropped, refusedConnections: links.refusedUnproven)
    }

    /// The members changed (one connected, or one lost): the applications hear it, and every peer gets `members`
    /// anew at the next exchange.
    func membershipChanged() {
        members.changed()
        applications.forEach { $0.membershipChanged() }
    }

    // MARK: - Lifecycle

    func start() -> EventLoopFuture<Int> {
        loop.preconditionInEventLoop()
        guard runState == .idle else {
            return loop.makeFailedFuture(SessionError(.invalidArgument, "a session starts once"))
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        let opened = sockets.open(port: configuration.port, withDatagrams: configuration.datagrams)
        return opened.map { _ in
            let core = bound.value
            core.runState = .running
            core.ticker = core.loop.scheduleRepeatedTask(initialDelay: .milliseconds(50), delay: .milliseconds(50)) {
                _ in bound.value.tick()
            }
            if let directory = core.configuration.inbox, let lifetime = core.configuration.partialFileLifetime {
                core.sweeper = Inbox(directory: directory, gate: nil).sweepEveryHour(
                    olderThan: lifetime, on: core.loop, logger: core.logger)
            }
            core.logger.debug(
                "session started",
                metadata: [
                    "session": "\(core.configuration.sessionName)", "name": "\(core.configuration.displayName)",
                    "port": "\(core.sockets.port)", "transports": "\(core.transports.map(\.name))",
                ])
            core.dialler.start()
            return core.sockets.port
        }
    }

    func stop() -> EventLoopFuture<Void> {
        loop.preconditionInEventLoop()
        guard runState != .stopped else { return loop.makeSucceededVoidFuture() }
        runState = .stopped
        ticker?.cancel()
        sweeper?.cancel()
        dialler.stop()
        invitations.stop(SessionError(.notRunning, "session stopped"))
        pings.failAll(SessionError(.notRunning, "session stopped"))
        for peer in peers.all { streams.peerGone(peer.id, reason: "the session stopped") }
        var closing: [EventLoopFuture<Void>] = []
        for link in links.all where link.isOpen {
            perform(link.step { $0.leave(.leaving) }, on: link)
            closing.append(link.channel.closeFuture.recover { _ in })
        }
        closing += sockets.close()
        applications.forEach { $0.sessionStopped() }
        events.flush()
        return EventLoopFuture.andAllComplete(closing, on: loop).map { [fanout = events.fanout] in
            fanout.finish()
        }
    }

    /// Every 50 ms: handshake deadlines, heartbeats and silence on every link; per peer the active path, acks and
    /// datagram probes; the applications' tick; overdue pings; the members exchange.
    func tick() {
        guard runState == .running else { return }
        let now = NIODeadline.now()
        for link in Array(links.all) where link.isOpen { gate.tick(link, now: now) }
        for peer in peers.all where peer.isConnected || peer.active == nil {
            // A leader keeps choosing: a peer with a handshaken link but none active yet gets one here too.
            if keeper.isLeader(of: peer.id), !peer.links.isEmpty { keeper.choosePath(for: peer, now: now) }
            guard peer.isConnected else { continue }
            if peer.reliable.ackDue, let link = peer.dataLink { acknowledge(peer, on: link) }
            datagrams.tick(peer.id, now: now)
        }
        applications.forEach { $0.tick(now: now) }
        pings.expire(now: now)
        members.exchange(now: now)
        if let timeout = configuration.deliveryTimeout?.timeAmount {
            sender.expireDeliveries(now: now, timeout: timeout)
        }
    }

    // MARK: - Links: the pipeline, the hello

    /// Sets up a new stream channel's pipeline; runs on the loop, before the channel is active.
    func setUpStream(
        _ channel: any Channel, role: LinkStateMachine.Role, transport: any Transport, endpoint: Endpoint?,
        for intendedPeer: PeerID?
    ) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let security = gate.security(for: role)
            if let security { try channel.pipeline.syncOperations.addHandler(LinkSealingHandler(security: security)) }
            try channel.pipeline.syncOperations.addHandler(
                LinkHandler(
                    core: self, role: role, transport: transport, endpoint: endpoint, intendedPeer: intendedPeer,
                    security: security))
        }
    }

    /// A peer opened a byte stream: to the subscribers, with a handle of this session's.
    func byteStreamOpened(from peer: PeerID, name: String, id: UInt32) {
        guard let owner else { return }
        events.yield(.streamOpened(IncomingByteStream(peer: peer, name: name, id: id, session: owner)))
    }

    // MARK: - Routing

    /// A message arrived on `link`.
    func received(_ message: Message, on link: Link) {
        guard link.isOpen, runState == .running else { return }
        link.received(at: .now())
        // An acknowledgement on the active link (one per 64 messages or 48 KiB of a stream of data) is delivered as
        // the machine would say, without its list of actions.
        if case .ack = message, link.machine.isActive { return deliver(message, on: link) }
        perform(link.step { $0.received(message) }, on: link)
    }

    /// Carries out a link's actions, in order.
    func perform(_ actions: [LinkStateMachine.Action], on link: Link) {
        var violated = false
        for action in actions {
            switch action {
            case .send(let message):
                if message == .bye(.protocolError) { violated = true }
                writer.write(message, on: link)
            case .identify(let hello):
                gate.identify(hello, on: link)
            case .handshakeMessage(let bytes):
                trust.handshakeMessage(bytes, on: link)
            case .pairing(let step):
                trust.receivedPairing(step, on: link)
            case .consider(let invitation):
                invitations.consider(invitation, on: link)
            case .ready(let token):
                linkReady(link, token: token)
            case .activatedByPeer(let resume):
                if let peer = peers.peer(of: link) { keeper.activatedByPeer(link, of: peer, resume: resume) }
            case .activationAnswered(let resume):
                if let peer = peers.peer(of: link) { keeper.activationAnswered(link, of: peer, resume: resume) }
            case .deliver(let message):
                deliver(message, on: link)
            case .dropStale(let kind):
                logger.trace("dropping \(kind) on a standby link; it is resent on the active one")
            case .peerSaidBye(let reason, let handshaken):
                peerSaidBye(reason, handshaken: handshaken, on: link)
            case .declined(let reason):
                declined(reason, on: link)
            case .close(let reason):
                if violated {
                    gate.rejected(link, reason)  // a message out of place
                } else {
                    logger.debug("closing link \(link.remoteDescription): \(reason)")
                }
                writer.writePending(of: link)  // a bye or a decline goes before the close
                link.channel.close(promise: nil)
            }
        }
    }
}
