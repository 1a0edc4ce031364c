import WireCodec

/// One peer's counter in a `counterState` (docs/wire-format.md 11.9).
public struct CounterEntry: Hashable, Sendable {
    /// Whose presses.
    public var peerID: PeerID
    /// How many, in total.
    public var count: UInt64

    /// Creates an entry.
    @inlinable
    public init(peerID: PeerID, count: UInt64) {
        self.peerID = peerID
        self.count = count
    }
}
