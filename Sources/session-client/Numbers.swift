import ArgumentParser
import SessionControl

extension CommandLineNumber: ExpressibleByArgument {
    /// Any text parses: `validate()` checks it, with a message that says the range.
    public init?(argument: String) { self.init(text: argument) }

    public var defaultValueDescription: String { text }

    /// The number when it lies in `range`; a ``ValidationError`` naming `name` and the range otherwise.
    @discardableResult
    func validated(_ name: String, in range: ClosedRange<Value>, unit: String = "") throws(ValidationError) -> Value {
        do {
            return try check(name, in: range, unit: unit)
        } catch {
            throw ValidationError(error.description)
        }
    }
}

/// The ranges of the numbers the commands take.
enum Limits {
    /// increment -n, bench --count.
    static let count = 1...1_000_000
    /// watch --count.
    static let events = 1...1_000_000_000
    /// watch --since: an event's number.
    static let sequence: ClosedRange<UInt64> = 0...UInt64.max
    /// watch --timeout, in seconds (a year).
    static let seconds = 0.001...31_536_000.0
    /// bench --size, in bytes; the daemon caps frames at the largest ping the wire allows.
    static let frameSize = 0...65_535
    /// bubble move and drop: X and Y (the field runs over 0...300; positions outside it are kept).
    static let coordinate = -1_000_000.0...1_000_000.0
    /// bubbles --step, in coordinate units.
    static let step = 0.1...300.0
}
