import LanSession
import Synchronization

/// Reads a session's events once and hands each one to every watcher.
final class EventHub: Sendable {
    private final class Watchers: Sendable {
        let continuations = Mutex<[Int: AsyncStream<SessionEvent>.Continuation]>([:])
        let nextID = Mutex(0)
    }

    private let watchers = Watchers()

    /// Starts pumping `events`, each one seen by `observe` first; runs until they end.
    func pump(_ events: AsyncStream<SessionEvent>, observe: (SessionEvent) -> Void = { _ in }) async {
        for await event in events {
            observe(event)
            let targets = watchers.continuations.withLock { Array($0.values) }
            for continuation in targets { continuation.yield(event) }
        }
        let targets = watchers.continuations.withLock { Array($0.values) }
        for continuation in targets { continuation.finish() }
    }

    /// A new watcher's events, from now on; the stream ends when the session ends.
    func subscribe() -> AsyncStream<SessionEvent> {
        let id = watchers.nextID.withLock { id in
            id += 1
            return id
        }
        let (stream, continuation) = AsyncStream<SessionEvent>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let watchers = self.watchers
        continuation.onTermination = { _ in _ = watchers.continuations.withLock { $0.removeValue(forKey: id) } }
        watchers.continuations.withLock { $0[id] = continuation }
        return stream
    }
}
