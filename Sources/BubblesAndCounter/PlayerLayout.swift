import WireCodec

/// Player indexes for every member of a session: the members sorted by peer id, numbered from 0.
///
/// Every peer computes the same layout from the same membership, with no negotiation, so it works for any number of
/// peers (the original app raced timestamps and only worked for two). It changes only when membership changes.
public struct PlayerLayout: Hashable, Sendable {
    /// Player index per member.
    public let indexes: [PeerID: Int]

    /// The layout of `members` (the local peer included).
    public init(members: some Sequence<PeerID>) {
        var indexes: [PeerID: Int] = [:]
        for (index, peer) in Set(members).sorted().enumerated() { indexes[peer] = index }
        self.indexes = indexes
    }

    /// A layout received on the wire.
    public init(entries: [LayoutEntry]) {
        var indexes: [PeerID: Int] = [:]
        for entry in entries { indexes[entry.peerID] = Int(entry.playerIndex) }
        self.indexes = indexes
    }

    /// The member with index 0, which broadcasts the layout and arbitrates bubble pick-ups.
    public var coordinator: PeerID? { indexes.first { $0.value == 0 }?.key }

    /// The layout as wire entries, by index.
    public var entries: [LayoutEntry] {
        indexes.sorted { $0.value < $1.value }.map {
            LayoutEntry(peerID: $0.key, playerIndex: UInt8(clamping: $0.value))
        }
    }
}
