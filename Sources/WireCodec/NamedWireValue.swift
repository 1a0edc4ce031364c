/// A one-byte wire value whose known values have names, kept as it is when unknown (a newer peer's): a reason, a
/// stream's kind or status. Its description is the known value's name, or the unknown one's number.
public protocol NamedWireValue: RawRepresentable<UInt8>, Hashable, Sendable, CustomStringConvertible {
    /// The names of the known values, the value `n` at index `n`.
    static var names: [String] { get }
    /// What an unknown value's description calls it: `reason` gives `reason(9)`.
    static var unknownName: String { get }
}

extension NamedWireValue {
    public var description: String {
        let index = Int(rawValue)
        return index < Self.names.count ? Self.names[index] : "\(Self.unknownName)(\(rawValue))"
    }
}
