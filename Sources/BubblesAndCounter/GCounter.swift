import WireCodec

/// A grow-only counter replicated across peers: one count per peer, each changed only by its own peer.
///
/// Increments travel as the sender's new absolute count, and states as counts per peer; both merge by taking, per
/// peer, the larger count. Merging is commutative, associative and idempotent, so every peer converges to the same
/// counts whatever the order, duplication or relaying of what it receives (see `CounterReplica`).
public struct GCounter: Hashable, Sendable {
    /// Count per peer.
    public private(set) var counts: [PeerID: UInt64]

    /// A counter with the given counts (for example, restored from disk).
    public init(counts: [PeerID: UInt64] = [:]) {
        self.counts = counts
    }

    /// The sum over every peer.
    public var total: UInt64 { counts.values.reduce(0, &+) }

    /// One peer's count.
    public subscript(peer: PeerID) -> UInt64 { counts[peer] ?? 0 }

    /// Adds `delta` to `peer`'s count: a local press, or a delta received from `peer` itself.
    public mutating func add(_ delta: UInt64, to peer: PeerID) {
        counts[peer, default: 0] &+= delta
    }

    /// Takes the larger of `peer`'s count and `count`. Returns whether it grew.
    @discardableResult
    public mutating func raise(_ peer: PeerID, to count: UInt64) -> Bool {
        guard count > self[peer] else { return false }
        counts[peer] = count
        return true
    }

    /// Takes, per peer, the larger of the two counts. Returns the peers whose count grew.
    @discardableResult
    public mutating func merge(_ other: [PeerID: UInt64]) -> [PeerID] {
        var grown: [PeerID] = []
        for (peer, count) in other where count > self[peer] {
            counts[peer] = count
            grown.append(peer)
        }
        return grown.sorted()
    }

    /// The state as wire entries, sorted by peer id.
    public var entries: [CounterEntry] {
        counts.keys.sorted().map { CounterEntry(peerID: $0, count: counts[$0]!) }
    }
}
