import ArgumentParser
import SessionControl

extension CommandLineNumber: ExpressibleByArgument {
    /// Any text parses: `validate()` checks it, with a message that says the range.
    public init?(argument: String) { self.init(text: argument) }

    public var defaultValueDescription: String { text }

    /// The number when it lies in `range`; a ``ValidationError`` naming `name` and the range otherwise.
    @discardableResult
    func validated(_ name: String, in range: ClosedRange<Value>) throws(ValidationError) -> Value {
        do {
            return try check(name, in: range)
        } catch {
            throw ValidationError(error.description)
        }
    }
}
