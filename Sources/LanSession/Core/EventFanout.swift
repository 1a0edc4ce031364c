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
        @usableFromInline var missed = 0

        @usableFromInline
        init(continuation: AsyncStream<Event>.Continuation) {
            self.continuation = continuation
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

    /// Creates a fanout; `missed` makes the event that tells a subscriber how many events it missed.
    public init(missed: @escaping @Sendable (Int) -> Event) {
        self.missed = missed
    }

    /// A new stream of every event from now on, holding at most `bufferSize` unread events.
    public func subscribe(bufferSize: Int) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(
            bufferingPolicy: .bufferingOldest(max(1, bufferSize)))
        let id: UInt64? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(continuation: continuation)
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
            for (id, subscriber) in state.subscribers {
                var missed = subscriber.missed
                if missed > 0, case .enqueued = subscriber.continuation.yield(self.missed(missed)) { missed = 0 }
                if missed > 0 {
                    missed += 1  // the notice did not fit: neither does this event
                } else if case .dropped = subscriber.continuation.yield(event) {
                    missed = 1
                }
                if missed != subscriber.missed { state.subscribers[id]?.missed = missed }
            }
        }
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
