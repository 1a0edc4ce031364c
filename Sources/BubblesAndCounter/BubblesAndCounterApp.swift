import LanSession
import NIOCore

/// The original apps (a counter, three bubbles, player indexes) on a session: add them before the session starts,
/// then count, move bubbles and read what happens from any thread.
///
/// ```swift
/// let session = try Session(configuration: SessionConfiguration(displayName: "alice", sessionName: "bubbles"))
/// let app = try await BubblesAndCounterApp(session: session)
/// try await session.start()
/// try await app.increment()                     // every member counts it, exactly once
/// for await event in app.events { print(event) }
/// ```
///
/// Each call hops once to the session's loop, where the application's state lives (`BubblesAndCounterCore`);
/// ``increment(by:)`` without a count store does not hop at all.
public final class BubblesAndCounterApp: Sendable {
    /// What the counter starts from and how it keeps this peer's count.
    public struct Configuration: Sendable {
        /// Counts to start from, e.g. this peer's own count restored from disk.
        public var initialCounts: [PeerID: UInt64]
        /// Where this peer's own count is made durable before an increment is sent; nil keeps it in memory only.
        public var localCountStore: (any LocalCountStore)?
        /// Anti-entropy: how often connected peers are sent the counts they may lack.
        public var counterExchangeInterval: Duration

        /// Creates a configuration.
        public init(
            initialCounts: [PeerID: UInt64] = [:], localCountStore: (any LocalCountStore)? = nil,
            counterExchangeInterval: Duration = .milliseconds(500)
        ) {
            self.initialCounts = initialCounts
            self.localCountStore = localCountStore
            self.counterExchangeInterval = counterExchangeInterval
        }

        /// The exchange interval for NIO's clock.
        var counterExchangeTime: TimeAmount {
            let (seconds, attoseconds) = counterExchangeInterval.components
            return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    /// Events buffered for one subscriber by default.
    public static let defaultEventBufferSize = 4096

    /// The session that carries the apps.
    public var session: Session { handle.session }
    /// How the counter was configured.
    public let configuration: Configuration
    private let handle: ApplicationHandle<BubblesAndCounterCore>
    private let fanout: EventFanout<BubblesAndCounterEvent>
    /// This peer's count as ``increment(by:)`` raises it without a count store.
    private let localIncrements: LocalIncrements

    /// Adds the apps to `session`, which must not have started yet.
    ///
    /// - Throws: ``SessionError/Code/invalidConfiguration`` for an exchange interval that is not positive;
    ///   ``SessionError/Code/invalidArgument`` when the session started already or carries another application of
    ///   the same message kinds.
    public init(session: Session, configuration: Configuration = Configuration()) async throws(SessionError) {
        guard configuration.counterExchangeInterval > .zero else {
            throw SessionError(.invalidConfiguration, "the counter exchange interval must be positive")
        }
        let fanout = EventFanout<BubblesAndCounterEvent>(missed: BubblesAndCounterEvent.eventsMissed)
        let localIncrements = LocalIncrements(startingAt: configuration.initialCounts[session.peerID] ?? 0)
        self.configuration = configuration
        self.fanout = fanout
        self.localIncrements = localIncrements
        self.handle = try await session.addApplication { context in
            BubblesAndCounterCore(
                context: context, configuration: configuration, localIncrements: localIncrements, events: fanout)
        }
    }

    /// A stream of every event of the counter and the bubbles from now on, for one reader, holding at most
    /// `bufferSize` unread events (``BubblesAndCounterEvent/eventsMissed(_:)`` tells a reader that fell behind). It
    /// ends when the session stops.
    public func subscribe(
        bufferSize: Int = BubblesAndCounterApp.defaultEventBufferSize
    )
        -> AsyncStream<BubblesAndCounterEvent>
    {
        fanout.subscribe(bufferSize: bufferSize)
    }

    /// Calls `take` with every event of the counter and the bubbles from now on as it happens, on the session's event
    /// loop: no stream, no buffer, no hop (see ``Session/observe(data:_:finished:)``); `take` must not block.
    /// `finished` is called once the session stopped.
    @discardableResult
    public func observe(
        _ take: @escaping @Sendable (BubblesAndCounterEvent) -> Void, finished: @escaping @Sendable () -> Void = {}
    ) -> EventObservation? {
        fanout.observe(take, finished: finished)
    }

    /// Ends an observation begun with ``observe(_:finished:)``.
    public func stopObserving(_ observation: EventObservation) {
        fanout.stopObserving(observation)
    }

    /// Every event from now on: a new subscription at each use, as ``subscribe(bufferSize:)``.
    public var events: AsyncStream<BubblesAndCounterEvent> { subscribe() }

    /// The replicated counter, with every increment this peer made so far.
    public func counter() async throws(SessionError) -> GCounter {
        try await handle.call { application in
            application.foldLocalIncrements()
            return application.counter
        }
    }

    /// The bubbles.
    public func bubbles() async throws(SessionError) -> BubbleBoard {
        try await handle.call { $0.bubbles }
    }

    /// Player indexes of the current members.
    public func layout() async throws(SessionError) -> PlayerLayout {
        try await handle.call { $0.layout }
    }

    /// Adds `count` presses by this peer and returns this peer's count; every member gets it reliably.
    ///
    /// With the configuration's ``Configuration/localCountStore``, the new count is durable before it is sent and
    /// before this returns; when the save fails, nothing was sent and the count is unchanged. Without one, the count
    /// grows at once on the caller's thread (no hop to the session's loop) and leaves at the end of the loop's turn:
    /// the increments of many callers in one turn go out as one message, since the count on the wire is absolute.
    @discardableResult
    public func increment(by count: UInt64 = 1) async throws(SessionError) -> UInt64 {
        if let store = configuration.localCountStore {
            return try await handle.run { $0.increment(by: count, savingTo: store) }
        }
        guard count > 0 else { throw SessionError(.invalidArgument, "an increment counts at least 1") }
        guard !session.isStopped else { throw SessionError(.notRunning, "the session was stopped") }
        guard let total = localIncrements.add(count) else {
            throw SessionError(.invalidArgument, "the count would pass \(UInt64.max)")
        }
        if localIncrements.claimFold() { handle.schedule { $0.foldLocalIncrements() } }
        return total
    }

    /// ``increment(by:)`` done at once by a caller on the session's event loop (a channel handler of that loop): when
    /// the count store saves in place (``LocalCountStore/savesInPlace``) and no increment before this one is still
    /// being saved, the new count is saved and sent to every member before this returns, with no hop and no task.
    /// Nil when it cannot be done so (off the loop, a store that saves off the loop, or none); nothing was done then,
    /// and ``increment(by:)`` is the way.
    public func incrementNow(by count: UInt64 = 1) throws(SessionError) -> UInt64? {
        guard let store = configuration.localCountStore else { return nil }
        let local = try handle.callOnLoop { application throws(SessionError) in
            try application.incrementNow(by: count, savingTo: store)
        }
        return local ?? nil
    }

    /// Asks for bubble `view`; the coordinator's answer arrives as a ``BubblesAndCounterEvent/holder(view:holder:)``
    /// event.
    public func pickUp(_ view: UInt8) async throws(SessionError) {
        try await handle.call { application throws(SessionError) in try application.pickUp(view) }
    }

    /// Moves bubble `view`, which this peer must hold.
    public func move(_ view: UInt8, x: Float, y: Float) async throws(SessionError) {
        try await handle.call { application throws(SessionError) in try application.move(view, x: x, y: y) }
    }

    /// Drops bubble `view`, which this peer must hold, at its final position.
    public func drop(_ view: UInt8, x: Float, y: Float) async throws(SessionError) {
        try await handle.call { application throws(SessionError) in try application.drop(view, x: x, y: y) }
    }
}
