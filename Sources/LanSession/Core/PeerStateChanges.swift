import Synchronization

/// Counts the changes of peers' connection states, for readers off the session's loop: a reader that saw the same
/// count before knows, without a hop to the loop, that no peer connected, was lost or left since.
final class PeerStateChanges: Sendable {
    private let count = Atomic<UInt64>(0)

    /// The changes so far.
    var value: UInt64 { count.load(ordering: .acquiring) }

    /// A peer's connection state changed (on the session's loop).
    func changed() {
        count.add(1, ordering: .releasing)
    }
}
