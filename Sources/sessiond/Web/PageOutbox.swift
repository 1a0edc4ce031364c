import Synchronization

/// What the daemon's events make for its pages and no page has been sent yet: a `PageQueue` shared by the task that
/// reads the events and the one that delivers them, which sleeps while nothing waits.
final class PageOutbox: Sendable {
    /// A message for every page, and whether it is a move this device made (a page's own move, not echoed to it).
    struct Update: Sendable {
        var message: PageMessage
        var ownMove = false
    }

    private struct State {
        var queue = PageQueue<Update>()
        var waiter: CheckedContinuation<[Update]?, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    /// Queues `update` in place of the state of the same thing that waits, and wakes the reader.
    func post(_ update: Update) {
        let woken: (CheckedContinuation<[Update]?, Never>, [Update])? = state.withLock { state in
            guard !state.finished else { return nil }
            state.queue.put(update, as: update.message.kind)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.queue.take())
        }
        if let (waiter, updates) = woken { waiter.resume(returning: updates) }
    }

    /// Everything waiting, in the order each thing first changed; waits while nothing does. Nil once finished.
    func next() async -> [Update]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Update]?, Never>) in
                let ready: [Update]?? = state.withLock { state in
                    if state.finished { return .some(nil) }
                    if !state.queue.isEmpty { return .some(state.queue.take()) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }

    /// `updates` (taken earlier) with what was posted since in place of theirs, in the order each thing first
    /// changed; the queue is then empty.
    func merge(_ updates: [Update]) -> [Update] {
        state.withLock { state in
            guard !state.queue.isEmpty else { return updates }
            var merged = PageQueue<Update>()
            for update in updates + state.queue.take() { merged.put(update, as: update.message.kind) }
            return merged.take()
        }
    }

    /// No more updates: a waiting reader gets nil, and what waits is let go.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<[Update]?, Never>? in
            state.finished = true
            _ = state.queue.take()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
