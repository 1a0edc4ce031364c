import WireCodec

/// One peer's player index in a `layout` (docs/wire-format.md 11.7).
public struct LayoutEntry: Hashable, Sendable {
    /// The peer.
    public var peerID: PeerID
    /// Its index, 0-based.
    public var playerIndex: UInt8

    /// Creates an entry.
    @inlinable
    public init(peerID: PeerID, playerIndex: UInt8) {
        self.peerID = peerID
        self.playerIndex = playerIndex
    }
}
