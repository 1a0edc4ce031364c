import WireCodec

/// A bubble's holder and position, sent by the coordinator (player index 0), which arbitrates pick-ups
/// (`bubbleState`, docs/wire-format.md 11.8).
public struct BubbleState: Hashable, Sendable {
    /// Which bubble.
    public var view: UInt8
    /// The peer holding it, or nil when nobody does (sent as peer id 0).
    public var holder: PeerID?
    /// Its centre; finite.
    public var x: Float
    /// Its centre; finite.
    public var y: Float

    /// Creates a bubble state.
    @inlinable
    public init(view: UInt8, holder: PeerID?, x: Float, y: Float) {
        self.view = view
        self.holder = holder
        self.x = x
        self.y = y
    }
}
