import LinkCrypto
import NIOCore
import WireCodec

/// Everything a session needs to know before it starts.
public struct SessionConfiguration: Sendable {
    /// This peer's id: the device key's (``DeviceIdentity/peerID``). Another one only with insecure links.
    public var peerID: PeerID
    /// The device's long-term keys: by default new ones at each start (a new device). Keep them with
    /// ``DeviceIdentity/persistent(in:)`` so that the device stays the same one (and stays trusted) across restarts.
    public var identity: DeviceIdentity
    /// Who gets in: paired devices (the default), holders of the secret, or anyone (section 9 of the wire format).
    /// With the default, two sessions link but do not join until their devices pair; each tells its subscribers so
    /// (``SessionNotice/notPaired(_:name:fingerprint:)``).
    public var admission: AdmissionMode = .paired
    /// Links without the Noise handshake and without encryption: for measuring what encryption costs, never for use.
    /// Requires admission `open`; peer ids are then only claimed, not proven. Behind `@_spi(Diagnostics)`.
    @_spi(Diagnostics) public var isInsecure = false
    /// The file where the trusted set is kept (admission `paired`), replaced atomically on every change; nil keeps
    /// it in memory only.
    public var trustedDevicesFile: String?
    /// The file where the members this session last saw are kept, replaced atomically when they change; nil keeps
    /// them in memory only. After a restart, they are members from the start: what is sent to them waits for them
    /// (up to ``deliveryTimeout``), as for a member that is away, instead of being refused until they reconnect.
    public var membersFile: String?
    /// The directory where durable messages (``SendMode/durable``) are kept until their receivers acknowledge them
    /// (the file `durable.log`); nil: the session sends none.
    public var durableDirectory: String?
    /// How long the link of an untrusted device stays open for it to ask to pair.
    public var strangerTimeout: Duration = .seconds(10)
    /// How long a pairing waits for people on both devices to confirm.
    public var pairingTimeout: Duration = .seconds(120)
    /// This peer's display name, at most `Wire.maxNameLength` UTF-8 bytes.
    public var displayName: String
    /// The session to join; peers of other sessions are refused.
    public var sessionName: String
    /// Address to listen on (TCP and UDP): every interface ("0.0.0.0", the default, so that peers on the LAN reach
    /// it), or one address, e.g. "127.0.0.1" for this machine only.
    public var host: String
    /// Port to listen on, TCP and UDP alike; 0 picks a free one.
    public var port: Int
    /// Most peers besides this one, 1...64.
    public var maxPeers: Int
    /// How invitations from other peers are answered.
    public var invitationPolicy: InvitationPolicy
    /// Context bytes sent with this peer's invitations, at most `Wire.maxInvitationContextLength`.
    public var invitationContext: [UInt8]
    /// How long this peer waits for an answer to its invitations, and how long it gives itself to decide.
    public var invitationTimeout: Duration
    /// A peer silent for this long is lost.
    public var livenessTimeout: Duration
    /// Quiet links send a heartbeat this often; an eighth of the liveness timeout by default.
    public var heartbeatInterval: Duration
    /// Redialling a lost peer backs off from this delay...
    public var reconnectInitialDelay: Duration
    /// ...up to this one.
    public var reconnectMaximumDelay: Duration
    /// Unacknowledged reliable messages kept per peer for resending after a reconnect.
    public var replayBufferMessages: Int
    /// Unacknowledged reliable bytes kept per peer.
    public var replayBufferBytes: Int
    /// Whether to offer the unreliable channel (UDP datagrams).
    public var datagrams: Bool
    /// Give up on UDP to a peer, and send its unreliable messages on the reliable link, after this long without an
    /// answer to a datagram probe.
    public var datagramProbeTimeout: Duration
    /// How often connected peers are told whom this peer is connected to, when that changed.
    public var membersExchangeInterval: Duration = .milliseconds(250)
    /// Transport names, most preferred first, for choosing a peer's active path; unlisted ones come after.
    public var transportPriority: [String] = [LANTransport.name]
    /// An active path silent for this long hands its traffic to a standby (the link itself is closed only after
    /// the liveness timeout); three heartbeat intervals by default.
    public var failoverSilence: Duration = .milliseconds(750)
    /// A better path must have been up this long before it takes the traffic from a healthy one.
    public var pathHysteresis: Duration = .seconds(3)
    /// While a peer is connected, a path of it that is down is redialled at most this far apart.
    public var standbyRedialMaximumDelay: Duration = .seconds(10)
    /// A link must prove that it belongs within this long of opening: a hello, with a secret the proof, and for an
    /// accepted link the invitation.
    public var proofTimeout: Duration = .seconds(3)
    /// Most accepted links that have not proved themselves yet, in all; more are closed at once.
    public var maxUnprovenLinks = 64
    /// Most accepted links that have not proved themselves yet from one address; more are closed at once.
    public var maxUnprovenLinksPerAddress = 16

    /// The directory where resources (files) sent by peers land, verified and moved in atomically; partial files of
    /// interrupted transfers wait there (hidden, `.partial-*`) to be resumed. Nil: resources are declined.
    public var inbox: String?
    /// Whether peers found by discovery (or named by members) are invited at once. False: only those the application
    /// invites with ``Session/invite(_:context:timeout:)``, those given to ``Session/connect(to:)`` and former members
    /// are dialled; peers that dial this one are still answered by the ``invitationPolicy``.
    public var invitesDiscoveredPeers = true
    /// Whether byte streams opened by peers are taken (as ``SessionEvent/streamOpened(_:)``) or declined.
    public var acceptsByteStreams = true
    /// How long a member may be away (no link to it) before what waits for it fails with ``SessionError/Code/timedOut``:
    /// data waiting for room on its reliable channel, and resources and byte streams to and from it (each side is told
    /// when it is back; a partial file stays to be resumed). What is already on the channel stays and arrives when it
    /// is back, however long that takes. Nil: wait for as long as it is a member.
    public var deliveryTimeout: Duration? = .seconds(300)
    /// Partial files of interrupted transfers older than this (by their last write) are removed from the inbox: at the
    /// start and every hour. Nil: kept until resumed or cancelled.
    public var partialFileLifetime: Duration? = .seconds(7 * 24 * 3600)
    /// The ciphers this device offers for its links' Noise handshake and sealing, in its order of preference (sessiond
    /// takes them from `LANSESSION_CIPHERS`). A link is sealed with AES-256-GCM when both sides offer it, else with
    /// ChaCha20-Poly1305; a side that does not offer that refuses the link (docs/wire-format.md, section 9.2). By
    /// default AES-256-GCM first where the CPU has AES instructions, then ChaCha20-Poly1305.
    public var ciphers: [NoiseCipher] = NoiseCipher.defaultOffer
    /// Holds the writes of received resources where a test says (see ``InboxGate``); nil in use.
    var inboxGate: InboxGate?

    /// Whether links run the Noise handshake and are encrypted: always, but with insecure links (`isInsecure`).
    public var isEncrypted: Bool { !isInsecure }

    /// The session's shared secret (admission `secret`), nil otherwise.
    public var secret: [UInt8]? {
        if case .secret(let secret) = admission { return secret }
        return nil
    }

    /// Creates a configuration with the defaults of the design: 8 peers, 2 s liveness, redials backing off from 100 ms to 2 s.
    public init(
        peerID: PeerID? = nil, identity: DeviceIdentity = .generate(), displayName: String,
        sessionName: String = "default", host: String = "0.0.0.0",
        port: Int = 0, maxPeers: Int = 8, invitationPolicy: InvitationPolicy = .acceptAll,
        invitationContext: [UInt8] = [], invitationTimeout: Duration = .seconds(30),
        livenessTimeout: Duration = .seconds(2), heartbeatInterval: Duration? = nil,
        reconnectInitialDelay: Duration = .milliseconds(100), reconnectMaximumDelay: Duration = .seconds(2),
        replayBufferMessages: Int = 65_536, replayBufferBytes: Int = 4 << 20, datagrams: Bool = true,
        datagramProbeTimeout: Duration = .seconds(1)
    ) {
        self.peerID = peerID ?? identity.peerID
        self.identity = identity
        self.displayName = displayName
        self.sessionName = sessionName
        self.host = host
        self.port = port
        self.maxPeers = maxPeers
        self.invitationPolicy = invitationPolicy
        self.invitationContext = invitationContext
        self.invitationTimeout = invitationTimeout
        self.livenessTimeout = livenessTimeout
        self.heartbeatInterval = heartbeatInterval ?? livenessTimeout / 8
        self.failoverSilence = self.heartbeatInterval * 3
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaximumDelay = reconnectMaximumDelay
        self.replayBufferMessages = replayBufferMessages
        self.replayBufferBytes = replayBufferBytes
        self.datagrams = datagrams
        self.datagramProbeTimeout = datagramProbeTimeout
    }

    /// Checks every value against its limit.
    public func validate() throws(SessionError) {
        guard displayName.utf8.count <= Wire.maxNameLength, !displayName.isEmpty else {
            throw SessionError(.invalidConfiguration, "display name must be 1...\(Wire.maxNameLength) UTF-8 bytes")
        }
        guard sessionName.utf8.count <= Wire.maxNameLength else {
            throw SessionError(.invalidConfiguration, "session name must be at most \(Wire.maxNameLength) UTF-8 bytes")
        }
        guard (1...64).contains(maxPeers) else {
            throw SessionError(.invalidConfiguration, "max peers must be 1...64, got \(maxPeers)")
        }
        guard (0...65_535).contains(port) else {
            throw SessionError(.invalidConfiguration, "port must be 0...65535, got \(port)")
        }
        guard invitationContext.count <= Wire.maxInvitationContextLength else {
            throw SessionError(
                .invalidConfiguration, "invitation context above \(Wire.maxInvitationContextLength) bytes")
        }
        guard peerID.rawValue != 0 else { throw SessionError(.invalidConfiguration, "peer id 0 is reserved") }
        guard failoverSilence > heartbeatInterval, pathHysteresis >= .zero, membersExchangeInterval > .zero else {
            throw SessionError(
                .invalidConfiguration,
                "the failover silence must be longer than the heartbeat interval, the intervals positive")
        }
        if let secret, secret.isEmpty { throw SessionError(.invalidConfiguration, "the secret is empty") }
        guard !ciphers.isEmpty, ciphers.count <= Wire.maxHelloCiphers, Set(ciphers).count == ciphers.count else {
            throw SessionError(.invalidConfiguration, "the ciphers must be one or more, each once, got \(ciphers)")
        }
        if isInsecure {
            guard case .open = admission else {
                throw SessionError(
                    .invalidConfiguration, "insecure links admit anyone: they need admission open, not \(admission)")
            }
        } else if peerID != identity.peerID {
            throw SessionError(
                .invalidConfiguration,
                "peer id \(peerID) is not the device key's (\(identity.peerID)); another one only with insecure links")
        }
        if let inbox, !ResourceFile.isDirectory(inbox) {
            throw SessionError(.invalidConfiguration, "the inbox \(inbox) is not a directory")
        }
        guard proofTimeout > .zero, maxUnprovenLinks > 0, maxUnprovenLinksPerAddress > 0 else {
            throw SessionError(
                .invalidConfiguration, "the proof timeout and the caps on unproven links must be positive")
        }
        guard reconnectInitialDelay > .zero, reconnectMaximumDelay >= reconnectInitialDelay,
            standbyRedialMaximumDelay >= reconnectInitialDelay
        else {
            throw SessionError(
                .invalidConfiguration,
                "redials need 0 < initial delay (\(reconnectInitialDelay)) <= maximum delay (\(reconnectMaximumDelay)) and <= standby maximum delay (\(standbyRedialMaximumDelay))"
            )
        }
        if let deliveryTimeout, deliveryTimeout <= .zero {
            throw SessionError(.invalidConfiguration, "the delivery timeout must be positive")
        }
        if let partialFileLifetime, partialFileLifetime <= .zero {
            throw SessionError(.invalidConfiguration, "the lifetime of partial files must be positive")
        }
        guard livenessTimeout > heartbeatInterval, heartbeatInterval > .zero else {
            throw SessionError(
                .invalidConfiguration, "the heartbeat interval must be shorter than the liveness timeout")
        }
    }
}

/// Who gets past the handshake (docs/wire-format.md, section 9).
public enum AdmissionMode: Hashable, Sendable, CustomStringConvertible {
    /// Only devices this one trusts: paired here, or introduced by a trusted member. Others may ask to pair.
    case paired
    /// Holders of the session's shared secret (`Noise_XXpsk3_…`); device keys still tell members apart.
    case secret([UInt8])
    /// Anyone on the network; links are still encrypted and peer ids proven.
    case open

    public var description: String {
        switch self {
        case .paired: "paired"
        case .secret: "secret"
        case .open: "open"
        }
    }
}

/// How a session answers invitations.
public enum InvitationPolicy: Sendable {
    /// Accept every invitation while there is room.
    case acceptAll
    /// Ask: each invitation becomes an ``SessionEvent/invitation(_:)`` event, answered with
    /// ``Session/answer(_:accept:reason:)`` before the session's invitation timeout, or declined as timed out.
    case ask
}

/// An invitation waiting for an answer.
public struct InvitationRequest: Hashable, Sendable {
    /// Number to answer it by.
    public var id: UInt64
    /// Who invites.
    public var peerID: PeerID
    /// Its display name.
    public var displayName: String
    /// Its context bytes.
    public var context: [UInt8]
}

/// An answer to an invitation.
public enum InvitationDecision: Hashable, Sendable {
    case accept
    case decline(DeclineReason)
}
