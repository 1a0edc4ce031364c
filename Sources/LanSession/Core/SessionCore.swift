import LinkCrypto
import Logging
import NIOCore
import WireCodec

/// The state of a running session, confined to one event loop.
///
/// Every link and the datagram socket of the session live on the same loop as this core, so a message goes from the
/// socket to the session's state without a thread hop or a lock. Public calls reach it through ``Session``, one hop
/// per call. Each link's protocol logic is a ``LinkStateMachine``; the core carries out the actions it returns and
/// keeps what spans links: peers, their paths and the active one, the reliable channel, the applications' state.
final class SessionCore {
    enum RunState: Hashable {
        case idle
        case running
        case stopped
    }

    let configuration: SessionConfiguration
    let loop: any EventLoop
    /// Every transport, the LAN one (which carries datagrams) first.
    let transports: [any Transport]
    let logger: Logger
    let events: EventFanout<SessionEvent>
    /// Random per start: tells peers that our sequence numbers start over.
    let incarnation = UInt64.random(in: 1...UInt64.max)
    let pathSelector: PathSelector
    /// The session's secret as the handshake uses it; nil without a secret.
    let secret: SessionSecret?
    /// Accepted links closed at once for the caps on unproven links.
    var rejectedUnproven = 0
    /// Accepts that failed for want of descriptors.
    var exhaustedAccepts = 0
    /// Handshakes whose proof failed.
    var failedAuthentications = 0
    /// Sealed datagrams dropped: a bad tag, a replay, or not sealed on a sealed link.
    var droppedDatagrams = 0

    var runState = RunState.idle
    /// The port of the transport that listens on the session's port (LAN), 0 before the start.
    var port = 0
    /// The listening channel of each transport, by name.
    var listeners: [String: any Channel] = [:]
    var datagramChannel: (any Channel)?
    var links: [ObjectIdentifier: Link] = [:]
    var peers: [PeerID: PeerRecord] = [:]
    /// Static endpoints and the peer each one turned out to be.
    var staticEndpoints: [Endpoint: PeerID?] = [:]
    var staticDials: [Endpoint: PeerRecord.DialState] = [:]
    /// The peer each discovery record (a DNS-SD instance name, or members heard from a peer) names.
    var discoveryRecords: [String: PeerID] = [:]
    /// Per peer that sent `members`: the members it named, for forgetting the ones it stops naming.
    var memberRecords: [PeerID: Set<PeerID>] = [:]
    /// Bumped whenever what this peer would say in `members` may have changed.
    var membersVersion: UInt64 = 0
    /// Per peer: the `membersVersion` last sent to it.
    var membersSent: [PeerID: UInt64] = [:]
    var lastMembersExchange = NIODeadline.now()
    /// The applications the session carries; each takes the message kinds it handles.
    var applications = ApplicationRouter()
    /// Counts peers' connection state changes for readers off the loop (discovery's resolve schedule).
    let peerStateChanges = PeerStateChanges()
    /// Datagram tokens of handshaken links, to the link.
    var tokens: [UInt64: Link] = [:]
    var pendingInvitations: [UInt64: PendingInvitation] = [:]
    var nextInvitationID: UInt64 = 1
    var pendingPings: [UInt32: PendingPing] = [:]
    var nextNonce: UInt32 = 1
    var ticker: RepeatedTask?
    /// Links with frames pending, and whether the task that writes them is queued (SessionCore+Flushing).
    var linksToFlush: [Link] = []
    var flushScheduled = false
    /// Streams this peer opened, and streams peers opened to it.
    var outgoing: [StreamKey: OutgoingStreamState] = [:]
    var incoming: [StreamKey: IncomingStreamState] = [:]
    var nextStreamID: UInt32 = 1
    /// Why recently ended streams this peer opened ended, for the writer's next call.
    var endedStreams: [StreamKey: SessionError] = [:]
    /// The session this core belongs to, for the handles its events carry.
    weak var owner: Session?
    let startedAt = NIODeadline.now()

    struct PendingInvitation {
        let link: Link
        let request: InvitationRequest
        let timeout: Scheduled<Void>
    }

    /// A ping waiting for its pong; the tick fails it after ``pingTimeout`` (no task per ping).
    struct PendingPing {
        let promise: EventLoopPromise<TimeAmount>
        let sentAt: NIODeadline
        let peer: PeerID
    }

    /// How long a ping waits for its pong.
    static let pingTimeout = TimeAmount.seconds(2)

    init(
        configuration: SessionConfiguration, loop: any EventLoop, transports: [any Transport], logger: Logger,
        events: EventFanout<SessionEvent>
    ) {
        self.configuration = configuration
        self.loop = loop
        self.transports = transports
        self.logger = logger
        self.events = events
        self.secret = configuration.secret.flatMap {
            try? SessionSecret(secret: $0, sessionName: configuration.sessionName)
        }
        self.pathSelector = PathSelector(
            priority: configuration.transportPriority, silence: configuration.failoverSilence.timeAmount,
            hysteresis: configuration.pathHysteresis.timeAmount)
    }

    var localPeer: PeerID { configuration.peerID }

    /// Microseconds since this core started, the clock of our pings.
    func nowMicros(_ now: NIODeadline = .now()) -> UInt64 {
        UInt64(max(0, (now - startedAt).nanoseconds / 1000))
    }

    func transport(named name: String) -> (any Transport)? {
        transports.first { $0.name == name }
    }

    // MARK: - Lifecycle

    func start() -> EventLoopFuture<Int> {
        loop.preconditionInEventLoop()
        guard runState == .idle else {
            return loop.makeFailedFuture(SessionError(.invalidArgument, "a session starts once"))
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        var listening: [EventLoopFuture<Void>] = []
        for transport in transports {
            let listened = transport.listen(host: configuration.host, port: configuration.port, on: loop) { channel in
                bound.value.setUpStream(channel, role: .acceptor, transport: transport, endpoint: nil, for: nil)
            }
            .flatMap { (channel, port) -> EventLoopFuture<Void> in
                let core = bound.value
                core.listeners[transport.name] = channel
                do {
                    try channel.pipeline.syncOperations.addHandler(
                        ListenerGuard { bound.value.descriptorsExhausted() }, position: .first)
                } catch {
                    return core.loop.makeFailedFuture(error)
                }
                guard transport.carriesDatagrams else { return core.loop.makeSucceededVoidFuture() }
                core.port = port
                guard core.configuration.datagrams else { return core.loop.makeSucceededVoidFuture() }
                return transport.openDatagrams(host: core.configuration.host, port: port, on: core.loop) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(DatagramHandler(core: bound.value))
                    }
                }
                .map { bound.value.datagramChannel = $0 }
                .flatMapError { error in
                    // Without a datagram socket the session still works: unreliable messages use the reliable link.
                    bound.value.logger.warning(
                        "no datagram socket on port \(port): \(error); using the reliable link only")
                    return bound.value.loop.makeSucceededVoidFuture()
                }
            }
            listening.append(listened)
        }
        return EventLoopFuture.whenAllSucceed(listening, on: loop).flatMapError { error in
            let core = bound.value
            for listener in core.listeners.values { listener.close(promise: nil) }
            core.datagramChannel?.close(promise: nil)
            return core.loop.makeFailedFuture(error)
        }
        .map { _ in
            let core = bound.value
            core.runState = .running
            core.ticker = core.loop.scheduleRepeatedTask(initialDelay: .milliseconds(50), delay: .milliseconds(50)) {
                _ in bound.value.tick()
            }
            core.logger.debug(
                "session started",
                metadata: [
                    "session": "\(core.configuration.sessionName)", "name": "\(core.configuration.displayName)",
                    "port": "\(core.port)", "transports": "\(core.transports.map(\.name))",
                ])
            for endpoint in core.staticEndpoints.keys { core.dialStatic(endpoint) }
            return core.port
        }
    }

    func stop() -> EventLoopFuture<Void> {
        loop.preconditionInEventLoop()
        guard runState != .stopped else { return loop.makeSucceededVoidFuture() }
        runState = .stopped
        ticker?.cancel()
        for peer in peers.values {
            for dial in peer.dials.values { dial.scheduled?.cancel() }
        }
        for dial in staticDials.values { dial.scheduled?.cancel() }
        for pending in pendingInvitations.values { pending.timeout.cancel() }
        pendingInvitations = [:]
        for (_, ping) in pendingPings {
            ping.promise.fail(SessionError(.notRunning, "session stopped"))
        }
        pendingPings = [:]
        for peer in peers.values { streamsEnded(with: peer, reason: "the session stopped") }
        var closing: [EventLoopFuture<Void>] = []
        for link in links.values where link.isOpen {
            perform(link.machine.leave(.leaving), on: link)
            closing.append(link.channel.closeFuture.recover { _ in })
        }
        for listener in listeners.values { closing.append(listener.close().recover { _ in }) }
        if let datagramChannel { closing.append(datagramChannel.close().recover { _ in }) }
        applications.forEach { $0.sessionStopped() }
        return EventLoopFuture.andAllComplete(closing, on: loop).map { [events] in
            events.finish()
        }
    }

    // MARK: - Channels

    /// Sets up a new stream channel's pipeline; runs on the loop, before the channel is active.
    func setUpStream(
        _ channel: any Channel, role: LinkStateMachine.Role, transport: any Transport, endpoint: Endpoint?,
        for intendedPeer: PeerID?
    ) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let security = secret.map { LinkSecurity(role: role, secret: $0) }
            if let security { try channel.pipeline.syncOperations.addHandler(LinkSealingHandler(security: security)) }
            try channel.pipeline.syncOperations.addHandler(
                LinkHandler(
                    core: self, role: role, transport: transport, endpoint: endpoint, intendedPeer: intendedPeer,
                    security: security))
        }
    }

    func linkOpened(
        channel: any Channel, role: LinkStateMachine.Role, transport: any Transport, endpoint: Endpoint?,
        intendedPeer: PeerID?, security: LinkSecurity?
    ) -> Link {
        let liveness = Liveness(
            heartbeatInterval: configuration.heartbeatInterval.timeAmount,
            timeout: configuration.livenessTimeout.timeAmount, now: .now())
        let link = Link(
            channel: channel, role: role, transport: transport, endpoint: endpoint, intendedPeer: intendedPeer,
            liveness: liveness, security: security)
        links[ObjectIdentifier(link)] = link
        guard runState == .running else {
            perform(link.machine.drop("session is not running"), on: link)
            return link
        }
        if role == .acceptor, let refusal = unprovenLinkRefusal(link) {
            rejectedUnproven += 1
            if rejectedUnproven == 1 || rejectedUnproven % 1_000 == 0 {
                logger.warning("closing accepted links at once: \(refusal) (\(rejectedUnproven) so far)")
            }
            perform(link.machine.drop(refusal), on: link)
            return link
        }
        let hello = localHello(for: link)
        if let security {
            do {
                security.localHello = try StreamFraming.encode(.hello(hello), limits: .default)
            } catch {
                logger.error("cannot encode the hello: \(error)")
                perform(link.machine.drop("cannot encode the hello"), on: link)
                return link
            }
        }
        write(.hello(hello), on: link)
        return link
    }

    /// Accept failed for want of descriptors: close the oldest accepted link that has not proved itself, so that the
    /// next accept succeeds instead of failing again at once.
    func descriptorsExhausted() {
        let oldest = links.values.filter { $0.role == .acceptor && $0.isOpen && $0.machine.isUnproven }
            .min { $0.openedAt < $1.openedAt }
        exhaustedAccepts += 1
        if exhaustedAccepts == 1 || exhaustedAccepts.isMultiple(of: 1_000) {
            logger.warning(
                "out of file descriptors accepting a connection (\(exhaustedAccepts) times so far); \(oldest == nil ? "no unproven connection to close" : "closing the oldest unproven one")"
            )
        }
        guard let oldest else { return }
        rejectedUnproven += 1
        perform(oldest.machine.drop("out of descriptors: the oldest unproven connection goes"), on: oldest)
    }

    /// Why a newly accepted link is over the caps on links that have not proved themselves; nil when it is not.
    func unprovenLinkRefusal(_ link: Link) -> String? {
        let address = link.channel.remoteAddress?.ipAddress
        var total = 0
        var fromAddress = 0
        for other in links.values where other !== link && other.role == .acceptor && other.isOpen {
            guard other.machine.isUnproven else { continue }
            total += 1
            if address != nil, other.channel.remoteAddress?.ipAddress == address { fromAddress += 1 }
        }
        if total >= configuration.maxUnprovenLinks {
            return "\(total) links have not proved themselves yet (limit \(configuration.maxUnprovenLinks))"
        }
        if fromAddress >= configuration.maxUnprovenLinksPerAddress {
            return
                "\(fromAddress) links from \(address ?? "?") have not proved themselves yet (limit \(configuration.maxUnprovenLinksPerAddress))"
        }
        return nil
    }

    /// The hello for `link`: with a secret it carries the link's own ephemeral key.
    func localHello(for link: Link) -> Hello {
        var capabilities: Capabilities = [.resume, .appMessages]
        if datagramChannel != nil { capabilities.insert(.datagrams) }
        var extensions: [HelloExtension] = port > 0 ? [.listenPort(UInt16(port))] : []
        if let security = link.security {
            capabilities.insert(.authentication)
            extensions.append(.authentication(publicKey: security.handshake.publicKey))
        }
        return Hello(
            peerID: localPeer, incarnation: incarnation, capabilities: capabilities,
            datagramPort: datagramChannel != nil ? UInt16(port) : 0, displayName: configuration.displayName,
            sessionName: configuration.sessionName, extensions: extensions)
    }

    func linkFailed(_ link: Link, error: any Error) {
        if let wire = error as? WireError {
            logger.warning("closing link \(link.remoteDescription): malformed frame: \(wire)")
        } else if let crypto = error as? LinkCryptoError {
            logger.warning("closing link \(link.remoteDescription): sealed record refused: \(crypto)")
        } else {
            logger.debug("link \(link.remoteDescription) failed: \(error)")
        }
    }

    /// Closes `link`, ignoring whatever it still delivers; ``linkClosed(_:)`` settles the rest.
    func close(_ link: Link, reason: String) {
        logger.debug("closing link", metadata: ["link": "\(link.remoteDescription)", "reason": "\(reason)"])
        link.machine.channelClosed()
        link.channel.close(promise: nil)
    }

    // MARK: - Writing

    func write(_ message: Message, on link: Link) {
        var buffer = link.channel.allocator.buffer(capacity: 16)
        do {
            try buffer.writeFrame(message)
        } catch {
            logger.error("cannot encode \(message.kind): \(error)")
            return
        }
        link.liveness.didSend(at: .now())
        writeNow(buffer, on: link)
    }

    /// Sends a sequenced message to `peer`: numbered, kept for resending, written if its active link carries data.
    ///
    /// The hot path: the frame is encoded once, straight into the peer's replay buffer, and the link writes a slice
    /// of it; in the steady state nothing is allocated and nothing leaves the event loop.
    func sendSequenced(_ message: Message, to peer: PeerRecord) {
        let frame: ByteBuffer?
        let overflowed: Bool
        do {
            (frame, overflowed) = try peer.reliable.send(message)
        } catch {
            logger.error("cannot encode \(message.kind): \(error)")
            return
        }
        if overflowed {
            logger.warning(
                "replay buffer for \(peer.name) (\(peer.id)) overflowed; the peer will be re-synchronised on reconnect")
            applications.forEach { $0.peerMissedMessages(peer.id) }
        }
        guard let link = peer.dataLink else { return }
        link.liveness.didSend(at: .now())
        if let frame {
            writeSoon(frame, on: link)
        } else {
            write(message, on: link)  // not kept, but still sent
        }
    }

    /// Peers that take part in the session: connected now, or connected before and expected back.
    var members: [PeerRecord] {
        peers.values.filter(\.isMember)
    }

    /// Sends a sequenced message to every member, connected or coming back.
    func broadcastSequenced(_ message: Message) {
        for peer in peers.values where peer.isMember { sendSequenced(message, to: peer) }  // no array per message
    }

    // MARK: - State

    func info(of peer: PeerRecord) -> PeerInfo {
        let ordered = peer.links.values.filter { $0 !== peer.active }.sorted {
            $0.remoteDescription < $1.remoteDescription
        }
        let links = (peer.active.map { [$0] } ?? []) + ordered
        let info = PeerInfo(
            peerID: peer.id, name: peer.name, state: peer.state,
            transport: peer.active?.transport.name ?? transports[0].name,
            address: peer.active?.remoteDescription ?? endpoints(of: peer).first?.description,
            links: links.map(\.info), endpoints: endpoints(of: peer),
            rttMicros: peer.rtt.smoothed.map { Int($0.nanoseconds / 1000) }, unreliable: peer.route,
            encrypted: peer.active?.security?.isEstablished ?? false)
        return info
    }

    func publishState(of peer: PeerRecord) {
        events.yield(.peerState(info(of: peer)))
        if peer.state == .connected || peer.state == .connecting { peer.notConnectedReason = nil }
        let connection = peer.connectionState
        guard connection != peer.publishedConnection else { return }
        peer.publishedConnection = connection
        peerStateChanges.changed()
        events.yield(.peerChanged(peer.id, connection))
    }

    func publishLink(_ link: Link, of peer: PeerRecord, closed: Bool = false) {
        var info = link.info
        if closed { info.state = .closed }
        events.yield(.linkChanged(peer.id, info))
    }

    /// The set of connected peers changed: the applications adjust (a layout, a coordinator).
    func membershipChanged() {
        applications.forEach { $0.membershipChanged() }
    }
}
