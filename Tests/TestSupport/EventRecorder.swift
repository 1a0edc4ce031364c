import LanSession
import Synchronization

/// Records a stream of events (a session's, an application's) from the moment it is made, and waits for the ones a
/// test expects.
public final class EventRecorder<Event: Sendable>: Sendable {
    private final class Store: Sendable {
        let events = Mutex<[Event]>([])
    }

    private let store = Store()
    private let task: Task<Void, Never>

    /// Records `events`, a subscription made before anything the test waits for can happen.
    public init(_ events: AsyncStream<Event>) {
        let store = self.store
        task = Task {
            for await event in events { store.events.withLock { $0.append(event) } }
        }
    }

    deinit { task.cancel() }

    /// The events so far, oldest first.
    public var events: [Event] { store.events.withLock { $0 } }

    /// Waits until `predicate` holds for the events so far; false on timeout.
    public func wait(timeout: Duration = .seconds(5), until predicate: ([Event]) -> Bool) async -> Bool {
        await waitUntil(timeout, every: .milliseconds(5)) { predicate(events) }
    }
}

extension EventRecorder where Event == SessionEvent {
    /// Records `session`'s events from now on, every one of them: a test that sends thousands of messages on a loaded
    /// machine must not find a gap where the default buffer (`Session.defaultEventBufferSize`) would have overflowed.
    public convenience init(_ session: Session) {
        self.init(session.subscribe(bufferSize: 1 << 20))
    }
}
