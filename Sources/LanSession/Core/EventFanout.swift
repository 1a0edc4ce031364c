import Synchronization

/// Hands every event to each of its subscribers, each through a bounded buffer of its own: a session's events
/// (``Session/subscribe(bufferSize:)``), and any application's own (the original apps use one for theirs).
///
/// A subscriber that falls behind keeps the oldest events it has not read; newer ones are counted instead of kept,
/// and it is told how many with the event `missed(count)` makes, as soon as its buffer has room again, so that it
/// knows to read the state afresh. Other subscribers are not slowed down by it. Events may be yielded from any
/// thread; the order of one thread's events is kept.
///
/// ``yield(_:)`` is inlinable, so that an application's module gets it specialized for its own event type: it runs
/// per message.
public final class EventFanout<Event: Sendable>: Sendable {
    @usableFromInline
    struct Subscriber {
        @usableFromInline let continuation: AsyncStream<Event>.Continuation
        /// Whether it takes the parts of an event that splits (see ``EventFanout/init(missed:split:)``) one by one.
        @usableFromInline let splits: Bool
        @usableFromInline var missed = 0

        @usableFromInline
        init(continuation: AsyncStream<Event>.Continuation, splits: Bool) {
            self.continuation = continuation
            self.splits = splits
        }
    }

    @usableFromInline
    struct State {
        @usableFromInline var subscribers: [UInt64: Subscriber] = [:]
        @usableFromInline var nextID: UInt64 = 1
        @usableFromInline var finished = false

        @usableFromInline
        init() {}
    }

    @usableFromInline let state = Mutex(State())
    @usableFromInline let missed: @Sendable (Int) -> Event
    @usableFromInline let split: (@Sendable (Event) -> [Event]?)?

    /// Creates a fanout; `missed` makes the event that tells a subscriber how many events it missed. `split` makes
    /// the parts of an event that is a batch (nil for any other), for subscribers that take them one by one.
    public init(missed: @escaping @Sendable (Int) -> Event, split: (@Sendable (Event) -> [Event]?)? = nil) {
        self.missed = missed
        self.split = split
    }

    /// A new stream of every event from now on, holding at most `bufferSize` unread events; with `splitting`, a batch
    /// comes as its parts, each an event of the stream.
    public func subscribe(bufferSize: Int, splitting: Bool = false) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(
            bufferingPolicy: .bufferingOldest(max(1, bufferSize)))
        let id: UInt64? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(continuation: continuation, splits: splitting)
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Gives `event` to every subscriber.
    @inlinable
    public func yield(_ event: Event) {
        state.withLock { state in
            // A batch's parts are made once, for the first subscriber that takes them.
            var parts: [Event]?
            var splitDone = false
            for (id, subscriber) in state.subscribers {
                var missed = subscriber.missed
                if subscriber.splits, let split {
                    if !splitDone {
                        parts = split(event)
                        splitDone = true
                    }
                    if let parts {
                        for part in parts { missed = give(part, to: subscriber.continuation, missed: missed) }
                    } else {
                        missed = give(event, to: subscriber.continuation, missed: missed)
                    }
                } else {
                    missed = give(event, to: subscriber.continuation, missed: missed)
                }
                if missed != subscriber.missed { state.subscribers[id]?.missed = missed }
            }
        }
    }

    /// Gives `event` to one subscriber, after the notice of what it missed if it has room again; returns what it
    /// missed now.
    @inlinable
    func give(_ event: Event, to continuation: AsyncStream<Event>.Continuation, missed: Int) -> Int {
        var missed = missed
        if missed > 0, case .enqueued = continuation.yield(self.missed(missed)) { missed = 0 }
        if missed > 0 {
            return missed + 1  // the notice did not fit: neither does this event
        }
        if case .dropped = continuation.yield(event) { return 1 }
        return 0
    }

    /// Ends every stream; later subscribers get an ended stream.
    public func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }

    /// Subscribers now.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }
}
