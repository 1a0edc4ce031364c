/// A number typed on the command line, kept as typed until it is checked against its range.
///
/// The tools parse such options leniently and check them in `validate()`, so that a value out of range, or not a
/// number at all, gets a message that says the range instead of the parser's generic "invalid value".
public struct CommandLineNumber<Value: LosslessStringConvertible & Comparable & Sendable>: Sendable,
    CustomStringConvertible
{
    /// The text as typed.
    public let text: String
    /// The number, nil when the text is not one of this type (or, for a real number, not finite).
    public let parsed: Value?

    /// A value as typed on the command line.
    public init(text: String) {
        self.text = text
        let value = Value(text)
        if let real = value as? Double, !real.isFinite {
            parsed = nil
        } else {
            parsed = value
        }
    }

    /// A default value.
    public init(_ value: Value) {
        text = value.description
        parsed = value
    }

    public var description: String { text }

    /// The number; a placeholder of the range's lower bound when it was never checked.
    public func value(or fallback: Value) -> Value { parsed ?? fallback }

    /// The number when it lies in `range`; otherwise throws a ``CommandLineNumberError`` such as
    /// "--count must be 1...1000000 (got 0)".
    @discardableResult
    public func check(
        _ name: String, in range: ClosedRange<Value>, unit: String = ""
    ) throws(CommandLineNumberError)
        -> Value
    {
        guard let parsed, range.contains(parsed) else {
            let suffix = unit.isEmpty ? "" : " " + unit
            throw CommandLineNumberError(
                "\(name) must be \(Self.show(range.lowerBound))...\(Self.show(range.upperBound))\(suffix) "
                    + "(got \(Self.quoted(text)))")
        }
        return parsed
    }

    /// A bound for a message: `300` rather than `300.0`.
    private static func show(_ bound: Value) -> String {
        if let real = bound as? Double, real == real.rounded(), abs(real) < 1e15 { return String(Int64(real)) }
        return bound.description
    }

    /// The text for a message: as typed, or quoted when it is empty or has blanks.
    private static func quoted(_ text: String) -> String {
        text.isEmpty || text.contains(where: \.isWhitespace) ? text.debugDescription : text
    }
}

/// A number out of its range, in one line that names the option and the range.
public struct CommandLineNumberError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
