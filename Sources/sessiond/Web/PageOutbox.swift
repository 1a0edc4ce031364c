import Synchronization

/// What waits to be written to one page, coalesced: the latest state of each thing the page shows (each bubble, the
/// counter, the peers, the pairings, the layout, the round trips) replaces an earlier one not yet written, so that a
/// page that reads slowly, or not at all, holds at most one message per thing, however many events happen. A
/// bubble's state, its holder, the counter and the peers are never lost; positions in between may be. Refusals are
/// kept in order, the last few only.
final class PageOutbox: Sendable {
    /// What a message is the state of.
    private enum Key: Hashable {
        case snapshot, bubble(Int), counter, peers, pairings, layout, rtt
        case error(UInt64)
    }

    /// Refusals kept for a page that does not read, at most.
    static let maxErrors = 16

    private struct State {
        var order: [Key] = []
        var latest: [Key: PageMessage] = [:]
        var errors: [UInt64] = []
        var nextError: UInt64 = 0
        var waiter: CheckedContinuation<[PageMessage]?, Never>?
        var finished = false

        mutating func take() -> [PageMessage] {
            let messages = order.compactMap { latest[$0] }
            order.removeAll(keepingCapacity: true)
            latest.removeAll(keepingCapacity: true)
            errors.removeAll()
            return messages
        }
    }

    private let state = Mutex(State())

    /// Queues `message`, replacing the state of the same thing that waits, and wakes the writer.
    func post(_ message: PageMessage) {
        let woken: (CheckedContinuation<[PageMessage]?, Never>, [PageMessage])? = state.withLock { state in
            guard !state.finished else { return nil }
            let key: Key
            switch message {
            case .snapshot: key = .snapshot
            case .bubble(let bubble): key = .bubble(bubble.view)
            case .counter: key = .counter
            case .peers: key = .peers
            case .pairings: key = .pairings
            case .layout: key = .layout
            case .rtt: key = .rtt
            case .error:
                key = .error(state.nextError)
                state.errors.append(state.nextError)
                state.nextError += 1
                if state.errors.count > Self.maxErrors {
                    let oldest = Key.error(state.errors.removeFirst())
                    state.latest[oldest] = nil
                    state.order.removeAll { $0 == oldest }
                }
            }
            if state.latest.updateValue(message, forKey: key) == nil { state.order.append(key) }
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.take())
        }
        if let (waiter, messages) = woken { waiter.resume(returning: messages) }
    }

    /// Everything waiting, in the order each thing first changed; waits while nothing does. Nil once finished.
    func next() async -> [PageMessage]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[PageMessage]?, Never>) in
                let ready: [PageMessage]?? = state.withLock { state in
                    if state.finished { return .some(nil) }
                    if !state.order.isEmpty { return .some(state.take()) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }

    /// No more messages: a waiting writer gets nil, and what waits is let go.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<[PageMessage]?, Never>? in
            state.finished = true
            _ = state.take()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
