import ArgumentParser
import SessionControl

extension CommandLineNumber: ExpressibleByArgument {
    /// Any text parses: `DaemonConfiguration` checks it, with a message that says the range.
    public init?(argument: String) { self.init(text: argument) }

    public var defaultValueDescription: String { text }
}
