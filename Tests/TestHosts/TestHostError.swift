/// Why a lab operation failed, and which of the command line's exit codes that is.
public struct TestHostError: Error, CustomStringConvertible, Equatable {
    /// The kind of failure, each with its exit code.
    public enum Kind: Sendable, Equatable {
        /// Something went wrong: exit 1.
        case failed
        /// A bad argument (a lab name, a host, a network): exit 2.
        case badArgument
        /// Requirements are missing (tools, root) and cannot be had here: exit 77, "skipped".
        case unavailable
    }

    /// The kind of failure.
    public var kind: Kind
    /// What went wrong, one line.
    public var description: String

    /// Creates an error.
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    /// A failure (exit 1).
    public static func failed(_ description: String) -> TestHostError { TestHostError(.failed, description) }

    /// The exit code of the command line for this error.
    public var exitCode: Int32 {
        switch kind {
        case .failed: 1
        case .badArgument: 2
        case .unavailable: 77
        }
    }
}
