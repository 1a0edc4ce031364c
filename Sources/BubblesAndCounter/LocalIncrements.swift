import Synchronization

/// This peer's count as callers raise it from any thread, when no ``LocalCountStore`` has to save it first.
///
/// A caller adds to an atomic count and returns at once, without a hop to the loop; the first caller of a turn queues
/// a fold, which raises the replica to the count and sends it (see ``BubblesAndCounterCore/foldLocalIncrements()``).
/// However many callers add in between, the members get one message each: the count on the wire is absolute.
final class LocalIncrements: Sendable {
    /// The count with every increment made so far.
    private let count: Atomic<UInt64>
    /// A fold is queued on the loop and has not started yet.
    private let foldQueued = Atomic<Bool>(false)

    init(startingAt count: UInt64) {
        self.count = Atomic(count)
    }

    /// The count with every increment made so far.
    var current: UInt64 { count.load(ordering: .acquiring) }

    /// Adds `amount`; the new count, or nil when it would pass `UInt64.max` (then nothing is added).
    func add(_ amount: UInt64) -> UInt64? {
        var current = count.load(ordering: .relaxed)
        while true {
            let (next, overflow) = current.addingReportingOverflow(amount)
            guard !overflow else { return nil }
            let (exchanged, original) = count.compareExchange(
                expected: current, desired: next, ordering: .acquiringAndReleasing)
            if exchanged { return next }
            current = original
        }
    }

    /// Whether the caller has to queue a fold: none is queued since the last one started.
    func claimFold() -> Bool {
        !foldQueued.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Called by the fold as it starts: clears the mark before reading the count, so that an increment added after
    /// the read queues a fold of its own.
    func startFold() -> UInt64 {
        foldQueued.store(false, ordering: .sequentiallyConsistent)
        return count.load(ordering: .sequentiallyConsistent)
    }
}
