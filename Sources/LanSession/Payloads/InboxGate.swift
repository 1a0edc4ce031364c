import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Holds a session's writes of received resources once a file reaches an offset, until released: a test paces a
/// receiver with it, so that a transfer is surely in flight when it cuts a link, stops the sender or cancels, however
/// fast the machine. A write waits on the thread pool, before it touches the file; the receiver's credit then stops
/// the sender a window beyond.
final class InboxGate: Sendable {
    private struct State {
        var threshold = UInt64.max
        /// Counts releases: a write held before a release goes on, even when the gate holds again at once.
        var releases = 0
        /// Writes waiting now, by the count of releases when they came (the older ones are on their way).
        var waiting: [Int: Int] = [:]
    }

    private let state = Mutex(State())

    init() {}

    /// Holds every write to a file that already holds `offset` bytes or more.
    func hold(from offset: UInt64) {
        state.withLock { $0.threshold = offset }
    }

    /// Lets every write go on, those waiting now included.
    func release() {
        state.withLock { state in
            state.threshold = .max
            state.releases += 1
        }
    }

    /// Whether a write waits at the gate now.
    var isHolding: Bool { state.withLock { $0.waiting[$0.releases, default: 0] > 0 } }

    /// Called on the thread pool before a write to a file holding `offset` bytes: returns once the gate lets it
    /// through (it looks every millisecond: a test's pace, not a production path).
    func pass(at offset: UInt64) {
        let generation: Int? = state.withLock { state in
            guard offset >= state.threshold else { return nil }
            state.waiting[state.releases, default: 0] += 1
            return state.releases
        }
        guard let generation else { return }
        while state.withLock({ $0.releases == generation }) { usleep(1_000) }
        state.withLock { $0.waiting[generation]! -= 1 }
    }
}
