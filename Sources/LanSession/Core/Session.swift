import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import WireCodec

/// A multipeer session: this peer and the peers it links to. Applications send them messages
/// (``send(_:to:mode:)-(ByteBuffer,_,_)``), byte streams (``openStream(named:to:)``) and files
/// (``sendResource(at:named:to:progress:)``), and read everything that happens from ``subscribe(bufferSize:data:)``.
/// Applications with commands of their own run inside it (``addApplication(_:)``), as the original apps (a counter,
/// three bubbles, player indexes) do in the BubblesAndCounter module.
///
/// All of a session's sockets and state live on one event loop; each call here hops to it once. A session is a
/// `Service` of swift-service-lifecycle: ``run()`` starts it, waits for graceful shutdown and stops it. It can also be
/// driven by hand with ``start()`` and ``stop()``. Either way it runs once: a stopped session does not start again.
public final class Session: Sendable {
    /// This peer's identity.
    public let peerID: PeerID
    /// The configuration the session was made with.
    public let configuration: SessionConfiguration
    /// Everything that happens from now on, in order: a new subscription at each use, as
    /// ``subscribe(bufferSize:data:)`` with its default buffer.
    public var events: AsyncStream<SessionEvent> { subscribe() }

    /// Events buffered for one subscriber by default.
    public static let defaultEventBufferSize = 4096

    private let fanout = EventFanout<SessionEvent>(missed: SessionEvent.eventsMissed, split: SessionEvent.split)

    let loop: any EventLoop
    private let ownedGroup: MultiThreadedEventLoopGroup?
    /// The core, and the same components it holds, for the calls that concern one of them only.
    private let box: NIOLoopBoundBox<(core: SessionCore, components: SessionComponents)>
    private let stopped = Mutex(false)
    /// Changes of peers' connection states, readable off the loop.
    private let peerStateChanges: PeerStateChanges

    /// Creates a session; nothing is bound until ``start()``.
    ///
    /// - Parameters:
    ///   - configuration: Who this peer is, whom it admits, and its timings; checked here
    ///     (``SessionConfiguration/validate()``).
    ///   - transports: How peers are reached, each transport listening and dialling its own endpoints; the first
    ///     that carries datagrams gives the unreliable channel. Names must differ.
    ///   - eventLoop: The loop every socket of the session runs on; by default a thread of the session's own.
    ///   - logger: Where the session logs, at debug and trace only, with the peer's id as metadata.
    public init(
        configuration: SessionConfiguration, transports: [any Transport] = [LANTransport()],
        eventLoop: (any EventLoop)? = nil,
        logger: Logger = Logger(label: "lansession")
    ) throws(SessionError) {
        try configuration.validate()
        guard !transports.isEmpty, Set(transports.map(\.name)).count == transports.count else {
            throw SessionError(.invalidConfiguration, "a session needs one or more transports of different names")
        }
        self.peerID = configuration.peerID
        self.configuration = configuration
        // A trusted set that cannot be read stops the start: it is never replaced by an empty one.
        let trusted =
            try configuration.trustedDevicesFile.map { path throws(SessionError) in
                try TrustStore(path: path).load(
                    identity: configuration.identity, sessionName: configuration.sessionName)
            } ?? TrustedDevices(identity: configuration.identity, sessionName: configuration.sessionName)
        if let eventLoop {
            self.loop = eventLoop
            self.ownedGroup = nil
        } else {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            self.loop = group.next()
            self.ownedGroup = group
        }
        let logger = {
            var logger = logger
            logger[metadataKey: "peer"] = "\(configuration.peerID)"
            return logger
        }()
        let peerStateChanges = PeerStateChanges()
        let components = SessionComponents(
            configuration: configuration, trusted: trusted, loop: self.loop, transports: transports, logger: logger,
            events: fanout, stateChanges: peerStateChanges)
        let core = SessionCore(
            configuration: configuration, components: components, loop: self.loop, transports: transports,
            logger: logger)
        self.peerStateChanges = peerStateChanges
        let box = NIOLoopBoundBox.makeBoxSendingValue((core: core, components: components), eventLoop: self.loop)
        self.box = box
        loop.execute { [weak self] in box.value.core.owned(by: self) }
    }

    /// A stream of every event from now on, for one reader, holding at most `bufferSize` unread events.
    ///
    /// Each subscriber has its own buffer. One that falls behind keeps the oldest unread events; newer ones are not
    /// kept for it, and once it has room again it gets ``SessionEvent/eventsMissed(_:)`` with how many, before the
    /// next event: the sign to read ``peers()`` and the rest afresh. The stream ends when the session stops.
    ///
    /// Application messages come one per event (``SessionEvent/data(from:bytes:reliable:)``), or with
    /// ``DataDelivery/batches`` those of one read of a link together in one event (``SessionEvent/messages(_:)``): one
    /// element of the stream, and one wake-up of its reader, for many messages.
    public func subscribe(
        bufferSize: Int = Session.defaultEventBufferSize, data: DataDelivery = .eachMessage
    ) -> AsyncStream<SessionEvent> {
        fanout.subscribe(bufferSize: bufferSize, splitting: data == .eachMessage)
    }

    /// Calls `take` with every event from now on as it happens, on the session's event loop and before the next
    /// event: the way for a reader on that loop (a daemon that writes the events to its own sockets) to see them with
    /// no stream, no buffer and no hop in between. Nothing is missed and nothing waits for it, so `take` must hand each
    /// event on without blocking. `finished` is called once the session stopped (on the thread that stopped it).
    ///
    /// - Returns: What ``stopObserving(_:)`` takes; nil once the session stopped (`finished` was called already).
    @discardableResult
    public func observe(
        data: DataDelivery = .eachMessage, _ take: @escaping @Sendable (SessionEvent) -> Void,
        finished: @escaping @Sendable () -> Void = {}
    ) -> EventObservation? {
        fanout.observe(splitting: data == .eachMessage, take, finished: finished)
    }

    /// Ends an observation begun with ``observe(data:_:finished:)``.
    public func stopObserving(_ observation: EventObservation) {
        fanout.stopObserving(observation)
    }

    /// Binds the listening sockets (TCP and UDP, same port) and starts dialling static peers. Returns the port.
    @discardableResult
    public func start() async throws(SessionError) -> Int {
        try await run { $0.start() }
    }

    /// Starts the session unless it was started already (for ``run()`` after an early ``start()``).
    func startIfNeeded() async throws(SessionError) {
        try await run { $0.startIfIdle() }
    }

    /// Says bye to every peer, closes every socket and ends ``events``.
    public func stop() async {
        guard
            !stopped.withLock({ stopped in
                defer { stopped = true }; return stopped
            })
        else { return }
        let box = self.box
        try? await loop.flatSubmit { box.value.core.stop() }.get()
        fanout.finish()
        if let ownedGroup { try? await ownedGroup.shutdownGracefully() }
    }

    /// Adds an application to the session, before ``start()``: `make` runs on the session's loop with what the
    /// session offers applications, and the application it returns gets the messages of its kinds from then on.
    ///
    /// - Returns: A handle that runs calls on the application, on the session's loop.
    /// - Throws: ``SessionError/Code/invalidArgument`` once the session started, or when the application takes a
    ///   kind or number that one added before takes, or a kind that is not an application command.
    public func addApplication<Application: SessionApplication>(
        _ make: @escaping @Sendable (any ApplicationContext) -> Application
    ) async throws(SessionError) -> ApplicationHandle<Application> {
        let box = try await call { [loop] core throws(SessionError) in
            let application = make(core)
            try core.add(application)
            return NIOLoopBoundBox(application, eventLoop: loop)
        }
        return ApplicationHandle(session: self, box: box)
    }

    /// Where the session accepts links, one endpoint per listening transport (its local address, which is the
    /// wildcard `0.0.0.0` when listening on every interface), once started.
    public var listeningEndpoints: [Endpoint] {
        get async { (try? await callComponents { $0.sockets.endpoints }) ?? [] }
    }

    /// The port the session listens on (TCP and UDP), once started.
    public var port: Int {
        get async { (try? await callComponents { $0.sockets.port }) ?? 0 }
    }

    /// Adds a peer to reach at a fixed address, without discovery; it is redialled whenever its link is lost.
    public func connect(to endpoint: Endpoint) async throws(SessionError) {
        try await callComponents { $0.dialler.addStatic(endpoint) }
    }

    /// Sets the addresses discovery record `record` (a DNS-SD instance name) gives for a peer, replacing what that
    /// record gave before; the peer keeps the addresses of its other records and its static ones.
    package func discovered(
        _ endpoints: [Endpoint], peerID: PeerID, name: String, record: String
    ) async throws(SessionError) {
        try await callComponents { $0.members.addDiscovered(endpoints, peer: peerID, name: name, record: record) }
    }

    /// Forgets the addresses discovery record `record` gave; those of the peer's other records stay.
    package func vanished(record: String) async throws(SessionError) {
        try await callComponents { $0.dialler.removeRecord(record) }
    }

    /// How each of `peers` can be reached now, for a discovery that resolves only what it has to.
    package func reach(of peers: Set<PeerID>) async throws(SessionError) -> [PeerID: PeerReach] {
        try await callComponents { $0.reporter.reach(of: peers) }
    }

    /// How many times a peer's connection state changed so far (connected, lost, left): read without a hop to the
    /// session's loop, so that a discovery can tell at no cost that nothing changed since it last looked.
    package var peerStateChangeCount: UInt64 { peerStateChanges.value }

    /// Every peer the session knows.
    public func peers() async throws(SessionError) -> [PeerInfo] {
        try await callComponents { $0.reporter.peerInfos() }
    }

    /// The member `wanted` names, by its peer id (16 hex digits) or its display name, with the snapshot of that peer
    /// alone; nil when no peer past discovery has that id or name. Of members that share the name, the lower peer id.
    package func member(named wanted: String) async throws(SessionError) -> PeerInfo? {
        try await callComponents { $0.reporter.member(named: wanted) }
    }

    /// Where each peer the session knows stands: ``peers()`` without the snapshots (cheap enough to call per message).
    public func peerStates() async throws(SessionError) -> [PeerID: PeerState] {
        try await callComponents { $0.peers.states }
    }

    /// What the session refused of strangers and whether its links are encrypted.
    public func security() async throws(SessionError) -> SecurityStatistics {
        try await call { $0.securityStatistics() }
    }

    /// Answers an invitation received with ``InvitationPolicy/ask``; false if it is no longer pending.
    @discardableResult
    public func answer(
        _ invitation: UInt64, accept: Bool, reason: DeclineReason = .rejected
    ) async throws(SessionError) -> Bool {
        try await callComponents { $0.invitations.answer(invitation, decision: accept ? .accept : .decline(reason)) }
    }

    /// Measures one round trip to `peer`, on its reliable link or (when datagrams get through) its unreliable
    /// channel, with `payloadSize` bytes of padding in the ping and its pong.
    ///
    /// With `transport`, the round trip goes on the peer's link of that transport, active or standby (the unreliable
    /// channel of a transport without datagrams is its link).
    public func ping(
        _ peer: PeerID, unreliable: Bool = false, payloadSize: Int = 0, transport: String? = nil
    ) async throws(SessionError) -> Duration {
        try await runComponents {
            $0.sender.ping(peer, unreliable: unreliable, payloadSize: payloadSize, transport: transport)
        }
        .duration
    }

    /// Measures `count` round trips to `peer` back to back, as ``ping(_:unreliable:payloadSize:transport:)`` does one:
    /// each ping leaves as the previous pong arrives, on the session's event loop, so the figures hold no thread hop.
    @_spi(Diagnostics) public func measureRoundTrips(
        to peer: PeerID, count: Int, unreliable: Bool = false, payloadSize: Int = 0, transport: String? = nil
    ) async throws(SessionError) -> [Duration] {
        guard (1...1_000_000).contains(count) else {
            throw SessionError(.invalidArgument, "count must be 1...1000000")
        }
        let samples = try await runComponents { components in
            components.sender.measureRoundTrips(
                peer, count: count, unreliable: unreliable, payloadSize: payloadSize, transport: transport)
        }
        return samples.map(\.duration)
    }

    /// Invitations waiting for an answer (with ``InvitationPolicy/ask``).
    public func invitations() async throws(SessionError) -> [InvitationRequest] {
        try await callComponents { $0.invitations.requests }
    }

    /// The entries of every table the session keeps that is keyed by a peer, a link, a transfer, a stream, a ping, a
    /// pairing, an invitation or a subscriber, by name (`links`, `peers`, `streamsOutgoing`, `eventSubscribers`, ...):
    /// for tests and diagnostics. Each comes back to what it was once its keys are gone (a link closed, a transfer
    /// ended, a subscriber gone); those keyed by a peer, once the peer is forgotten.
    package func tableSizes() async throws(SessionError) -> [String: Int] {
        let subscribers = fanout.subscriberCount
        let observers = fanout.observerCount
        var sizes = try await callComponents { $0.tableSizes }
        sizes["eventSubscribers"] = subscribers
        sizes["eventObservers"] = observers
        return sizes
    }

    /// Closes the active link to `peer` abruptly, as a broken connection would (for tests and diagnostics).
    package func dropLink(to peer: PeerID) async throws(SessionError) {
        try await callComponents { $0.peers.dropActiveLink(to: peer) }
    }

    // MARK: - Hopping to the loop

    func call<T: Sendable>(
        _ body: @escaping @Sendable (SessionCore) throws(SessionError) -> T
    ) async throws(SessionError) -> T {
        try await onLoopNow(body)
    }

    func run<T: Sendable>(
        _ body: @escaping @Sendable (SessionCore) -> EventLoopFuture<T>
    ) async throws(SessionError) -> T {
        try await onLoop(body)
    }

    /// ``call(_:)`` for a call that concerns one component only: the same hop, to the components.
    func callComponents<T: Sendable>(
        _ body: @escaping @Sendable (SessionComponents) throws(SessionError) -> T
    ) async throws(SessionError) -> T {
        guard !stopped.withLock({ $0 }) else { throw SessionError(.notRunning, "the session was stopped") }
        let box = self.box
        if loop.inEventLoop { return try body(box.value.components) }
        let result: Result<T, SessionError> = await withUnsafeContinuation { continuation in
            loop.execute {
                continuation.resume(
                    returning: Result { () throws(SessionError) -> T in try body(box.value.components) })
            }
        }
        return try result.get()
    }

    /// ``run(_:)`` for a call that concerns one component only: the same hop, to the components.
    func runComponents<T: Sendable>(
        _ body: @escaping @Sendable (SessionComponents) -> EventLoopFuture<T>
    ) async throws(SessionError) -> T {
        guard !stopped.withLock({ $0 }) else { throw SessionError(.notRunning, "the session was stopped") }
        let box = self.box
        do {
            return try await loop.flatSubmit { body(box.value.components) }.get()
        } catch {
            throw SessionError(error)
        }
    }

    /// The one hop to the loop behind every call: refused once stopped; failures come back as `SessionError`s.
    func onLoop<T: Sendable>(
        _ body: @escaping @Sendable (SessionCore) -> EventLoopFuture<T>
    ) async throws(SessionError) -> T {
        guard !stopped.withLock({ $0 }) else { throw SessionError(.notRunning, "the session was stopped") }
        let box = self.box
        do {
            return try await loop.flatSubmit { body(box.value.core) }.get()
        } catch {
            throw SessionError(error)
        }
    }

    /// The hop for work done at once on the loop: no future, one task and one continuation; none when called on the
    /// loop already.
    func onLoopNow<T: Sendable>(
        _ body: @escaping @Sendable (SessionCore) throws(SessionError) -> T
    ) async throws(SessionError) -> T {
        guard !stopped.withLock({ $0 }) else { throw SessionError(.notRunning, "the session was stopped") }
        let box = self.box
        if loop.inEventLoop { return try body(box.value.core) }
        let result: Result<T, SessionError> = await withUnsafeContinuation { continuation in
            loop.execute {
                continuation.resume(returning: Result { () throws(SessionError) -> T in try body(box.value.core) })
            }
        }
        return try result.get()
    }

    /// Runs blocking work (the file I/O of a transfer) on ``FileThreads``.
    func offload<T: Sendable>(_ body: @escaping @Sendable () throws(SessionError) -> T) async throws(SessionError) -> T
    {
        do {
            return try await FileThreads.run { () throws -> T in try body() }
        } catch {
            throw SessionError(error)
        }
    }

    /// Runs `body` on the loop without waiting (cancellation handlers).
    func scheduleComponents(_ body: @escaping @Sendable (SessionComponents) -> Void) {
        let box = self.box
        loop.execute { body(box.value.components) }
    }

    /// Whether ``stop()`` was called: every call fails from then on.
    public var isStopped: Bool { stopped.withLock { $0 } }
}
