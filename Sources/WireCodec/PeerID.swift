/// A peer's stable random identity: 64 bits, sent as 8 bytes little-endian.
public struct PeerID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The identity's bits.
    public var rawValue: UInt64

    /// Wraps raw bits.
    @inlinable
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Wraps raw bits.
    @inlinable
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// Parses the 16-hex-digit form produced by ``description``.
    public init?(hex: some StringProtocol) {
        guard hex.utf8.count == 16, let value = UInt64(hex, radix: 16) else { return nil }
        self.rawValue = value
    }

    /// A fresh identity from the system's random generator.
    ///
    /// Never 0, which the wire format uses for "no peer".
    public static func random() -> PeerID {
        var generator = SystemRandomNumberGenerator()
        return PeerID(rawValue: UInt64.random(in: 1...UInt64.max, using: &generator))
    }

    public static func < (lhs: PeerID, rhs: PeerID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Sixteen lower-case hex digits.
    public var description: String {
        let digits = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - digits.utf8.count) + digits
    }
}
