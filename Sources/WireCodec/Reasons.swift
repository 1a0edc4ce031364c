/// Why an invitation or a hello was declined.
///
/// Unknown values received from newer peers are kept as they are.
public struct DeclineReason: NamedWireValue {
    /// The reason's wire value.
    public var rawValue: UInt8
    /// Wraps a wire value.
    @inlinable
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// No reason given.
    public static let unspecified = DeclineReason(rawValue: 0)
    /// The invitee's policy or user said no.
    public static let rejected = DeclineReason(rawValue: 1)
    /// The session already holds its maximum number of peers.
    public static let full = DeclineReason(rawValue: 2)
    /// Nobody decided before the invitation's timeout.
    public static let timedOut = DeclineReason(rawValue: 3)
    /// The peers speak incompatible protocol versions.
    public static let versionMismatch = DeclineReason(rawValue: 4)
    /// The peers belong to different sessions.
    public static let wrongSession = DeclineReason(rawValue: 5)
    /// Another link to the same peer won the simultaneous-connect tie-break.
    public static let duplicateLink = DeclineReason(rawValue: 6)
    /// The handshake cannot go on or did not prove what it must: one side encrypts and the other does not, one
    /// admits by the secret and the other does not, or the proven key is not the claimed peer id's
    /// (docs/wire-format.md, section 9).
    public static let authenticationFailed = DeclineReason(rawValue: 7)
    /// The device is not trusted (admission `paired`) and did not pair, or was removed (section 9.5).
    public static let notTrusted = DeclineReason(rawValue: 8)

    public static let names = [
        "unspecified", "rejected", "full", "timedOut", "versionMismatch", "wrongSession", "duplicateLink",
        "authenticationFailed", "notTrusted",
    ]
    public static let unknownName = "reason"
}

/// Why a link was closed on purpose.
///
/// Unknown values received from newer peers are kept as they are.
public struct ByeReason: NamedWireValue {
    /// The reason's wire value.
    public var rawValue: UInt8
    /// Wraps a wire value.
    @inlinable
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// No reason given.
    public static let unspecified = ByeReason(rawValue: 0)
    /// The sender is leaving the session (for example, shutting down).
    public static let leaving = ByeReason(rawValue: 1)
    /// The link is replaced by another link to the same peer.
    public static let replaced = ByeReason(rawValue: 2)
    /// The sender received something it could not accept.
    public static let protocolError = ByeReason(rawValue: 3)
    /// The sender does not trust the receiver's device any more: it was removed from the session (section 9.6).
    public static let removed = ByeReason(rawValue: 4)

    public static let names = ["unspecified", "leaving", "replaced", "protocolError", "removed"]
    public static let unknownName = "reason"
}
