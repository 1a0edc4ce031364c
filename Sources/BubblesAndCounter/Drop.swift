/// A bubble released at its final position (`drop`, docs/wire-format.md 11.8).
public struct Drop: Hashable, Sendable {
    /// Which bubble.
    public var view: UInt8
    /// Final centre; finite.
    public var x: Float
    /// Final centre; finite.
    public var y: Float

    /// Creates a drop.
    @inlinable
    public init(view: UInt8, x: Float, y: Float) {
        self.view = view
        self.x = x
        self.y = y
    }
}
