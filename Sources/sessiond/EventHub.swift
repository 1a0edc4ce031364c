import BubblesAndCounter
import LanSession
import Synchronization

/// Reads the session's events and the apps' events once and hands each one to every watcher.
final class EventHub: Sendable {
    private final class Watchers: Sendable {
        let continuations = Mutex<[Int: AsyncStream<DaemonEvent>.Continuation]>([:])
        let nextID = Mutex(0)
    }

    private let watchers = Watchers()

    /// Pumps `sessionEvents` and `appEvents`, each event seen by `observe` first; runs until both end (the session
    /// stopped), then ends every watcher's stream.
    func pump(
        _ sessionEvents: AsyncStream<SessionEvent>, _ appEvents: AsyncStream<BubblesAndCounterEvent>,
        observe: @escaping @Sendable (DaemonEvent) -> Void = { _ in }
    ) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in sessionEvents { self.deliver(.session(event), observe) }
            }
            group.addTask {
                for await event in appEvents { self.deliver(.app(event), observe) }
            }
        }
        let targets = watchers.continuations.withLock { Array($0.values) }
        for continuation in targets { continuation.finish() }
    }

    private func deliver(_ event: DaemonEvent, _ observe: (DaemonEvent) -> Void) {
        observe(event)
        let targets = watchers.continuations.withLock { Array($0.values) }
        for continuation in targets { continuation.yield(event) }
    }

    /// A new watcher's events, from now on; the stream ends when the session ends.
    func subscribe() -> AsyncStream<DaemonEvent> {
        let id = watchers.nextID.withLock { id in
            id += 1
            return id
        }
        let (stream, continuation) = AsyncStream<DaemonEvent>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let watchers = self.watchers
        continuation.onTermination = { _ in _ = watchers.continuations.withLock { $0.removeValue(forKey: id) } }
        watchers.continuations.withLock { $0[id] = continuation }
        return stream
    }
}
