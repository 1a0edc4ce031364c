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

/// A bubble moved by its holder.
public struct Move: Hashable, Sendable {
    /// Which bubble.
    public var view: UInt8
    /// New centre, shared coordinate space; finite.
    public var x: Float
    /// New centre, shared coordinate space; finite.
    public var y: Float
    /// Per-bubble sequence number, compared with serial-number arithmetic (RFC 1982) so that it wraps.
    public var sequence: UInt16

    /// Creates a move.
    @inlinable
    public init(view: UInt8, x: Float, y: Float, sequence: UInt16) {
        self.view = view
        self.x = x
        self.y = y
        self.sequence = sequence
    }

    /// Whether sequence `a` is newer than `b` in 16-bit serial-number arithmetic.
    public static func isNewer(_ a: UInt16, than b: UInt16) -> Bool {
        a != b && (a &- b) < 0x8000
    }
}

/// A bubble released at its final position.
public struct Drop: Hashable, Sendable {
    /// Which bubble.
    public var view: UInt8
    /// Final centre; finite.
    public var x: Float
    /// Final centre; finite.
    public var y: Float

    /// Creates a drop.
    @inlinable
    public init(view: UInt8, x: Float, y: Float) {
        self.view = view
        self.x = x
        self.y = y
    }
}

/// A bubble's holder and position, sent by the coordinator (player index 0), which arbitrates pick-ups.
public struct BubbleState: Hashable, Sendable {
    /// Which bubble.
    public var view: UInt8
    /// The peer holding it, or nil when nobody does (sent as peer id 0).
    public var holder: PeerID?
    /// Its centre; finite.
    public var x: Float
    /// Its centre; finite.
    public var y: Float

    /// Creates a bubble state.
    @inlinable
    public init(view: UInt8, holder: PeerID?, x: Float, y: Float) {
        self.view = view
        self.holder = holder
        self.x = x
        self.y = y
    }
}

/// One peer's player index in a `layout`.
public struct LayoutEntry: Hashable, Sendable {
    /// The peer.
    public var peerID: PeerID
    /// Its index, 0-based.
    public var playerIndex: UInt8

    /// Creates an entry.
    @inlinable
    public init(peerID: PeerID, playerIndex: UInt8) {
        self.peerID = peerID
        self.playerIndex = playerIndex
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

/// One peer's counter in a `counterState`.
public struct CounterEntry: Hashable, Sendable {
    /// Whose presses.
    public var peerID: PeerID
    /// How many, in total.
    public var count: UInt64

    /// Creates an entry.
    @inlinable
    public init(peerID: PeerID, count: UInt64) {
        self.peerID = peerID
        self.count = count
    }
}
