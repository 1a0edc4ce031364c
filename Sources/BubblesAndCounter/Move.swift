/// A bubble moved by its holder (`move`, docs/wire-format.md 11.8).
public struct Move: Hashable, Sendable {
    /// Which bubble.
    public var view: UInt8
    /// New centre, shared coordinate space; finite.
    public var x: Float
    /// New centre, shared coordinate space; finite.
    public var y: Float
    /// Per-bubble sequence number, compared with serial-number arithmetic (RFC 1982) so that it wraps.
    public var sequence: UInt16

    /// Creates a move.
    @inlinable
    public init(view: UInt8, x: Float, y: Float, sequence: UInt16) {
        self.view = view
        self.x = x
        self.y = y
        self.sequence = sequence
    }

    /// Whether sequence `a` is newer than `b` in 16-bit serial-number arithmetic.
    public static func isNewer(_ a: UInt16, than b: UInt16) -> Bool {
        a != b && (a &- b) < 0x8000
    }
}
