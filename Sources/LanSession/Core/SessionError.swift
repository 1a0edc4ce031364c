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
        /// A message is larger than its limit (`Wire.maxDataLength`, `Wire.maxUnreliableDataLength`).
        case messageTooLarge
        /// A stream or transfer was cancelled, by this side or the other.
        case cancelled
        /// The receiver declined a stream or a resource.
        case declined
        /// A transfer failed: a disk error, a digest that did not match, a peer that restarted or left.
        case transferFailed
        /// No transfer of that id is under way.
        case noSuchTransfer
        /// A pairing or trust change was refused: no such pairing, a code that is not the one shown, a device that
        /// is not trusted, or the trusted set could not be saved.
        case trust
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

    /// `error` itself when it is a session error; otherwise an I/O error with its text.
    init(_ error: any Error) {
        if let error = error as? SessionError {
            self = error
        } else {
            self.init(.io, "\(error)")
        }
    }
}
