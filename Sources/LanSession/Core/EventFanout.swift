import Synchronization

/// Hands every event to each of its subscribers, each through a bounded buffer of its own: a session's events
/// (``Session/subscribe(bufferSize:data:)``), and any application's own (the original apps use one for theirs).
///
/// A subscriber that falls behind keeps the oldest events it has not read; newer ones are counted instead of kept,
/// and it is told how many with the event `missed(count)` makes, as soon as its buffer has room again, so that it
/// knows to read the state afresh. Other subscribers are not slowed down by it. Events may be yielded from any
/// thread; the order of one thread's events is kept.
///
/// An observer (``observe(splitting:_:finished:)``) takes every event at once instead, on the thread that yields it:
/// no buffer, no stream and no hop, for a reader that lives on the same event loop as the events and hands them on
/// without waiting (a daemon writing them to its own sockets).
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

    /// A reader called with each event as it is yielded.
    @usableFromInline
    struct Observer: Sendable {
        @usableFromInline let id: UInt64
        /// Whether it takes the parts of an event that splits one by one.
        @usableFromInline let splits: Bool
        @usableFromInline let take: @Sendable (Event) -> Void
        let finished: @Sendable () -> Void
    }

    @usableFromInline
    struct State {
        @usableFromInline var subscribers: [UInt64: Subscriber] = [:]
        /// In the order they began to observe.
        @usableFromInline var observers: [Observer] = []
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

    /// Gives `event` to every subscriber, then to every observer (outside the lock: an observer may subscribe, or stop
    /// observing).
    @inlinable
    public func yield(_ event: Event) {
        // A batch's parts are made once, for the first subscriber or observer that takes them.
        var parts: [Event]?
        var splitDone = false
        let observers = state.withLock { state in
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
            return state.observers
        }
        for observer in observers {
            if observer.splits, let split {
                if !splitDone {
                    parts = split(event)
                    splitDone = true
                }
                if let parts {
                    for part in parts { observer.take(part) }
                    continue
                }
            }
            observer.take(event)
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

    /// Calls `take` with every event from now on, at once, on the thread that yields it and before ``yield(_:)``
    /// returns (a session's events and the original apps': on the session's event loop), and `finished` once, when the
    /// events end (``finish()``). Nothing is buffered for an observer, so nothing is missed, and nothing waits for it
    /// either: `take` must hand the event on without blocking. With `splitting`, a batch comes as its parts.
    ///
    /// - Returns: What ``stopObserving(_:)`` takes; nil when the events ended already (`finished` was called).
    @discardableResult
    public func observe(
        splitting: Bool = false, _ take: @escaping @Sendable (Event) -> Void,
        finished: @escaping @Sendable () -> Void = {}
    ) -> EventObservation? {
        let id: UInt64? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.observers.append(Observer(id: id, splits: splitting, take: take, finished: finished))
            return id
        }
        guard let id else {
            finished()
            return nil
        }
        return EventObservation(id: id)
    }

    /// Ends an observation: its `take` is not called for events yielded after this returns, nor its `finished`.
    public func stopObserving(_ observation: EventObservation) {
        state.withLock { $0.observers.removeAll { $0.id == observation.id } }
    }

    /// Ends every stream and every observation; later subscribers get an ended stream.
    public func finish() {
        let (subscribers, observers) = state.withLock { state in
            state.finished = true
            defer {
                state.subscribers = [:]
                state.observers = []
            }
            return (Array(state.subscribers.values), state.observers)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
        for observer in observers { observer.finished() }
    }

    /// Subscribers now.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Observers now.
    public var observerCount: Int { state.withLock { $0.observers.count } }
}

/// An observer of an ``EventFanout`` (``EventFanout/observe(splitting:_:finished:)``).
public struct EventObservation: Hashable, Sendable {
    let id: UInt64
}
