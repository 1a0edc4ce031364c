/// Why a session operation failed.
public struct SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: Hashable, Sendable {
        /// A configuration value is out of range.
        case invalidConfiguration
        /// Binding or connecting a socket failed.
        case io
        /// The session is not running (not started, or stopped).
        case notRunning
        /// The peer is unknown or not connected.
        case noSuchPeer
        /// An argument is out of range (a bubble number, a delta).
        case invalidArgument
        /// An operation did not complete in time.
        case timedOut
    }

    /// What kind of failure.
    public var code: Code
    /// A sentence for people.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
