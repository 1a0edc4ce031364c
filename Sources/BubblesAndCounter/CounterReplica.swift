import WireCodec

/// One peer's replica of the session's counter, and what it knows of every other peer's replica, so that
/// anti-entropy sends each peer only the counts it may lack.
///
/// A plain value driven by the session; it does no I/O. Every input is idempotent: a count received twice, late, or
/// through a third peer is merged by taking the larger count per peer, so nothing is ever counted twice. The local
/// peer's own count grows only through ``commitLocal(_:)``: entries for it that other peers send are ignored.
struct CounterReplica {
    /// This peer.
    let local: PeerID
    /// The counts this replica holds.
    private(set) var counter: GCounter
    /// Per remote peer: the count of each peer id it is known to hold, because it said so or because this replica
    /// sent it reliably. Forgotten when the remote peer restarts or messages to it were lost.
    private var known: [PeerID: [PeerID: UInt64]] = [:]
    /// Bumped whenever `counter` changes; lets ``missing(for:)`` be skipped for peers already up to date.
    private(set) var version: UInt64 = 0
    /// Per remote peer: `version` when it was last brought up to date.
    private var upToDate: [PeerID: UInt64] = [:]

    init(local: PeerID, counts: [PeerID: UInt64] = [:]) {
        self.local = local
        self.counter = GCounter(counts: counts)
    }

    /// This peer's own count.
    var localCount: UInt64 { counter[local] }

    /// Raises this peer's own count to `count` (an increment, made durable by the caller). Returns whether it grew.
    @discardableResult
    mutating func commitLocal(_ count: UInt64) -> Bool {
        guard counter.raise(local, to: count) else { return false }
        version &+= 1
        return true
    }

    /// `peer` announced its own count (a `counterIncrement`). Returns whether the replica grew.
    mutating func receivedIncrement(_ count: UInt64, from peer: PeerID) -> Bool {
        guard peer != local else { return false }
        note(peer, holds: count, of: peer)
        guard counter.raise(peer, to: count) else { return false }
        version &+= 1
        return true
    }

    /// What merging a `counterState` changed.
    struct MergeResult: Equatable {
        /// Peers whose count grew, sorted.
        var grown: [PeerID] = []
        /// A count above this peer's own that the sender claimed for it (ignored), if any.
        var claimedForLocal: UInt64?
    }

    /// `peer` sent counts it holds (a `counterState`): merged by taking the larger count per peer, except for this
    /// peer's own entry, which only its own increments change.
    mutating func receivedState(_ entries: [CounterEntry], from peer: PeerID) -> MergeResult {
        var result = MergeResult()
        var incoming: [PeerID: UInt64] = [:]
        for entry in entries {
            note(peer, holds: entry.count, of: entry.peerID)
            if entry.peerID == local {
                if entry.count > counter[local] {
                    result.claimedForLocal = max(result.claimedForLocal ?? 0, entry.count)
                }
                continue
            }
            incoming[entry.peerID] = max(incoming[entry.peerID] ?? 0, entry.count)
        }
        result.grown = counter.merge(incoming)
        if !result.grown.isEmpty { version &+= 1 }
        return result
    }

    /// The entries `peer` may lack: every count above what it is known to hold, except its own (it is the authority
    /// on that one). Sorted by peer id; empty when it is up to date.
    func missing(for peer: PeerID) -> [CounterEntry] {
        guard upToDate[peer] != version else { return [] }
        let held = known[peer] ?? [:]
        return counter.entries.filter { $0.peerID != peer && $0.count > held[$0.peerID] ?? 0 }
    }

    /// The entries `peer` may lack, which the caller sends it reliably now (they reach it unless it restarts): from
    /// then on it is known to hold them.
    mutating func takeMissing(for peer: PeerID) -> [CounterEntry] {
        let entries = missing(for: peer)
        for entry in entries { note(peer, holds: entry.count, of: entry.peerID) }
        upToDate[peer] = version
        return entries
    }

    /// This peer's own count was sent to `peer` reliably (a `counterIncrement`).
    mutating func sentLocal(to peer: PeerID) {
        note(peer, holds: counter[local], of: local)
    }

    /// Nothing is known any more of what `peer` holds: it restarted, or messages to it were lost. The next exchange
    /// sends it everything.
    mutating func forget(_ peer: PeerID) {
        known[peer] = nil
        upToDate[peer] = nil
    }

    private mutating func note(_ peer: PeerID, holds count: UInt64, of owner: PeerID) {
        if count > known[peer, default: [:]][owner] ?? 0 {
            known[peer, default: [:]][owner] = count
        }
    }
}
