/// The invitee's yes, with the token that tags datagrams on this link.
public struct Accept: Hashable, Sendable {
    /// Random 64-bit token carried by every datagram of the link, both ways.
    public var linkToken: UInt64

    /// Creates an accept.
    @inlinable
    public init(linkToken: UInt64) {
        self.linkToken = linkToken
    }
}

/// Where a link's data resumes: sent by the pair's leader to make the link the active one, and answered by the other
/// side.
public struct Resume: Hashable, Sendable {
    /// The highest sequence number received from the other side (0: none).
    public var received: UInt64
    /// The sequence number of the next sequenced message the sender will send or resend.
    ///
    /// Above `received + 1` on the other side means messages in between are gone from the sender's replay buffer:
    /// the two sides re-synchronise their state instead.
    public var nextSequence: UInt64

    /// Creates a resume.
    @inlinable
    public init(received: UInt64, nextSequence: UInt64) {
        self.received = received
        self.nextSequence = nextSequence
    }
}

/// An invitation into the sender's session.
public struct Invitation: Hashable, Sendable {
    /// Opaque bytes for the invitee's policy, at most `Wire.maxInvitationContextLength`.
    public var context: [UInt8]
    /// How long the inviter waits for an answer, in milliseconds.
    public var timeoutMilliseconds: UInt32

    /// Creates an invitation.
    @inlinable
    public init(context: [UInt8] = [], timeoutMilliseconds: UInt32 = 30_000) {
        self.context = context
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}

/// The body of `ping` and of the `pong` that echoes it.
public struct Ping: Hashable, Sendable {
    /// Chosen by the pinger; echoed unchanged.
    public var nonce: UInt32
    /// The pinger's clock when sending, in microseconds; echoed unchanged.
    public var timestamp: UInt64
    /// Padding that gives the frame the size a measurement wants, at most `Wire.maxPingPayloadLength`; echoed.
    public var payload: [UInt8]

    /// Creates a ping body.
    @inlinable
    public init(nonce: UInt32, timestamp: UInt64, payload: [UInt8] = []) {
        self.nonce = nonce
        self.timestamp = timestamp
        self.payload = payload
    }
}

/// A member in a `members` message.
public struct Member: Hashable, Sendable {
    /// The member's identity.
    public var peerID: PeerID
    /// Its display name, at most `Wire.maxNameLength` bytes.
    public var displayName: String
    /// Where the sender reached it, at most `Wire.maxMemberEndpoints`.
    public var endpoints: [MemberEndpoint]

    /// Creates a member entry.
    @inlinable
    public init(peerID: PeerID, displayName: String, endpoints: [MemberEndpoint]) {
        self.peerID = peerID
        self.displayName = displayName
        self.endpoints = endpoints
    }
}

/// An address a member was reached at: its transport's name, a host and a port (or channel).
public struct MemberEndpoint: Hashable, Sendable {
    /// The transport, e.g. "lan", at most `Wire.maxTransportNameLength` bytes.
    public var transport: String
    /// The host, at most `Wire.maxHostLength` bytes.
    public var host: String
    /// The port or channel.
    public var port: UInt16

    /// Creates an endpoint entry.
    @inlinable
    public init(transport: String, host: String, port: UInt16) {
        self.transport = transport
        self.host = host
        self.port = port
    }
}
