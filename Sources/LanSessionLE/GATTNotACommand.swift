/// What a GATT face does with a value a central writes to its command characteristic. The face knows no command of
/// its own: the application behind it (the original apps' in the BubblesAndCounterGATT module) reads the value and
/// takes it, at once and without blocking (on the face's event loop, or on the bus's thread under bluetoothd).
///
/// - Throws: ``GATTNotACommand`` when the value is no command of the application: a Write Request is answered with
///   the application error 0x80 (docs/wire-format.md 4.2), a Write Command dropped.
public typealias GATTCommandTaker = @Sendable ([UInt8]) throws(GATTNotACommand) -> Void

/// Why a value written to a GATT face's command characteristic is no command of the application behind it.
public struct GATTNotACommand: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong, for logs.
    public var reason: String

    /// Creates a refusal.
    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
