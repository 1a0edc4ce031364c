import LinkCrypto
import NIOCore
import WireCodec

/// Where a peer stands.
public enum PeerState: String, Hashable, Sendable, CaseIterable {
    /// Known from discovery or configuration; no link yet.
    case discovered
    /// A link is being set up (handshake, invitation).
    case connecting
    /// The handshake succeeded both ways; messages flow.
    case connected
    /// The link was lost; redialling.
    case reconnecting
    /// The link was lost and there is no way to redial; waiting for the peer to come back.
    case lost
}

/// How unreliable messages reach a peer.
public enum UnreliableRoute: String, Hashable, Sendable {
    /// Not known yet (the datagram probe is under way).
    case probing
    /// UDP datagrams.
    case udp
    /// UDP did not get through: unreliable messages go on the reliable link.
    case fallback
}

/// A snapshot of one link of a peer: one path to it.
public struct LinkInfo: Hashable, Sendable {
    /// Where a link stands.
    public enum State: String, Hashable, Sendable {
        /// In its handshake.
        case connecting
        /// Handshaken and heartbeated, ready to take over.
        case standby
        /// Carries the peer's traffic.
        case active
        /// Gone (in ``SessionEvent/linkChanged(_:_:)`` only).
        case closed
    }

    /// Its transport, e.g. "lan".
    public var transport: String
    /// The remote address, e.g. "10.77.0.2:47000".
    public var address: String
    /// Where it stands.
    public var state: State
    /// Smoothed round-trip time of its heartbeats, in microseconds.
    public var rttMicros: Int?
    /// Past the Noise handshake, and sealed.
    public var encrypted: Bool
    /// The cipher that seals it, once past the Noise handshake.
    public var cipher: NoiseCipher?

    /// Creates a link snapshot.
    public init(
        transport: String, address: String, state: State, rttMicros: Int?, encrypted: Bool = false,
        cipher: NoiseCipher? = nil
    ) {
        self.encrypted = encrypted
        self.cipher = cipher
        self.transport = transport
        self.address = address
        self.state = state
        self.rttMicros = rttMicros
    }
}

/// A snapshot of one peer.
public struct PeerInfo: Hashable, Sendable {
    /// Its identity.
    public var peerID: PeerID
    /// Its display name (empty until its hello arrived).
    public var name: String
    /// Where it stands.
    public var state: PeerState
    /// The transport of its active link, e.g. "lan".
    public var transport: String
    /// The remote address of its active link, e.g. "127.0.0.1:4242", or its first endpoint while it has none.
    public var address: String?
    /// Its links, one per path: the active one first, then standbys and links in their handshake.
    public var links: [LinkInfo]
    /// Every endpoint it is known by (proven by a handshake, static, and per discovery record), in the order redials
    /// try them.
    public var endpoints: [Endpoint]
    /// Smoothed round-trip time of the active link, in microseconds.
    public var rttMicros: Int?
    /// How unreliable messages reach it.
    public var unreliable: UnreliableRoute
    /// Its active link is past the Noise handshake and sealed.
    public var encrypted: Bool = false
    /// The cipher that seals its active link.
    public var cipher: NoiseCipher?
    /// The fingerprint of the device key its handshakes proved (nil on insecure links).
    public var fingerprint: String?
    /// How it got in (nil on insecure links).
    public var trust: DeviceTrust?
}

/// What a session refused of strangers, and whether its links are encrypted.
public struct SecurityStatistics: Hashable, Sendable {
    /// Links run the Noise handshake and are sealed (false only with insecure links, for measuring).
    public var encrypted: Bool
    /// Handshakes refused: no encryption, another pre-shared key setting, a message that did not decrypt, a key that
    /// is not the claimed peer id's.
    public var failedHandshakes: Int
    /// Datagrams dropped on sealed links: a bad tag, a replay, or unsealed.
    public var droppedDatagrams: Int
    /// Accepted connections closed at once for the caps on links that had not proved themselves.
    public var refusedConnections: Int
}
