/// `status`: who this daemon is.
public struct StatusResult: Codable, Hashable, Sendable {
    public var name: String
    public var peerID: String
    public var session: String
    public var port: Int
    public var peers: Int
    /// Links run the Noise handshake and are encrypted; false only with `--insecure`, for measuring.
    public var encrypted: Bool
    /// This device's key fingerprint, which people compare.
    public var fingerprint: String
    /// Who gets in: paired, secret or open.
    public var admission: String
    /// Handshakes refused (no encryption, another secret setting, a message that did not decrypt, a key that is not
    /// the claimed peer id's).
    public var failedHandshakes: Int
    /// Datagrams dropped on sealed links (a bad tag, a replay, or unsealed).
    public var droppedDatagrams: Int
    /// Connections closed at once for the caps on links that had not proved themselves.
    public var refusedConnections: Int
    /// The release the daemon runs (its `--version`): after an upgrade, whether the new binary is the one running.
    /// Absent from daemons before 0.14.
    public var version: String?
    /// Who serves the LE GATT face: `bluetoothd` (a GATT application registered with it) or `att` (the daemon's own
    /// ATT server); absent without one, and from older daemons.
    public var gattFace: String?

    public init(
        name: String, peerID: String, session: String, port: Int, peers: Int, encrypted: Bool = false,
        fingerprint: String = "", admission: String = "open", failedHandshakes: Int = 0, droppedDatagrams: Int = 0,
        refusedConnections: Int = 0, version: String? = LanSessionVersion.current, gattFace: String? = nil
    ) {
        self.version = version
        self.gattFace = gattFace
        self.encrypted = encrypted
        self.fingerprint = fingerprint
        self.admission = admission
        self.failedHandshakes = failedHandshakes
        self.droppedDatagrams = droppedDatagrams
        self.refusedConnections = refusedConnections
        self.name = name
        self.peerID = peerID
        self.session = session
        self.port = port
        self.peers = peers
    }
}

/// `peers`: one element per peer.
public struct PeerResult: Codable, Hashable, Sendable {
    public var peerID: String
    public var name: String
    /// connecting, connected, reconnecting, lost (and discovered, before a first link).
    public var state: String
    public var transport: String
    public var address: String?
    public var playerIndex: Int?
    public var rttMicros: Int?
    /// udp, fallback (or probing, just after connecting).
    public var unreliable: String
    /// Every endpoint the peer is known by ("HOST:PORT"): proven by a handshake, static, discovered.
    public var endpoints: [String]
    /// Its links, one per path: the active one first.
    public var links: [LinkResult]
    /// Its active link is past the Noise handshake and encrypted.
    public var encrypted: Bool
    /// The cipher of its active link: aesgcm or chachapoly (nil before the handshake and on insecure links).
    public var cipher: String?
    /// The fingerprint of the device key its handshake proved (nil on insecure links).
    public var fingerprint: String?
    /// How it got in: paired, introduced, secret or open (nil on insecure links).
    public var trust: String?

    public init(
        peerID: String, name: String, state: String, transport: String, address: String?, playerIndex: Int?,
        rttMicros: Int?, unreliable: String, endpoints: [String] = [], links: [LinkResult] = [],
        encrypted: Bool = false, cipher: String? = nil,
        fingerprint: String? = nil, trust: String? = nil
    ) {
        self.encrypted = encrypted
        self.cipher = cipher
        self.fingerprint = fingerprint
        self.trust = trust
        self.endpoints = endpoints
        self.links = links
        self.peerID = peerID
        self.name = name
        self.state = state
        self.transport = transport
        self.address = address
        self.playerIndex = playerIndex
        self.rttMicros = rttMicros
        self.unreliable = unreliable
    }
}

/// One link of a peer in `peers`.
public struct LinkResult: Codable, Hashable, Sendable {
    public var transport: String
    public var address: String
    /// active, standby or connecting.
    public var state: String
    public var rttMicros: Int?
    /// Past the Noise handshake and encrypted.
    public var encrypted: Bool
    /// The cipher that seals it: aesgcm or chachapoly (nil before the handshake and on insecure links).
    public var cipher: String?

    public init(
        transport: String, address: String, state: String, rttMicros: Int?, encrypted: Bool = false,
        cipher: String? = nil
    ) {
        self.encrypted = encrypted
        self.cipher = cipher
        self.transport = transport
        self.address = address
        self.state = state
        self.rttMicros = rttMicros
    }
}

/// `increment`: this peer's count after the presses were saved and sent.
public struct IncrementResult: Codable, Hashable, Sendable {
    public var local: UInt64

    public init(local: UInt64) { self.local = local }
}

/// `counter`: every count.
public struct CounterResult: Codable, Hashable, Sendable {
    public struct PeerCount: Codable, Hashable, Sendable {
        public var name: String
        public var count: UInt64

        public init(name: String, count: UInt64) {
            self.name = name
            self.count = count
        }
    }

    public var local: UInt64
    /// Counts of the other peers, by peer id.
    public var peers: [String: PeerCount]
    public var total: UInt64

    public init(local: UInt64, peers: [String: PeerCount], total: UInt64) {
        self.local = local
        self.peers = peers
        self.total = total
    }
}

/// `bubbles`: one element per bubble.
public struct BubbleResult: Codable, Hashable, Sendable {
    public var view: Int
    public var holder: String?
    public var x: Double
    public var y: Double

    public init(view: Int, holder: String?, x: Double, y: Double) {
        self.view = view
        self.holder = holder
        self.x = x
        self.y = y
    }
}

/// `invitations`: one element per invitation waiting for an answer.
public struct InvitationResult: Codable, Hashable, Sendable {
    public var id: UInt64
    public var peerID: String
    public var name: String
    /// The context bytes, base64.
    public var context: String

    public init(id: UInt64, peerID: String, name: String, context: String) {
        self.id = id
        self.peerID = peerID
        self.name = name
        self.context = context
    }
}

/// `accept`, `decline`: whether the invitation was still waiting.
public struct AnswerResult: Codable, Hashable, Sendable {
    public var answered: Bool

    public init(answered: Bool) { self.answered = answered }
}

/// `pickup`, `move`, `drop`: done.
public struct DoneResult: Codable, Hashable, Sendable {
    public var done: Bool

    public init(done: Bool = true) { self.done = done }
}

/// `bench`: round-trip percentiles measured by the daemon.
public struct BenchResult: Codable, Hashable, Sendable {
    public var transport: String
    public var channel: String
    public var count: Int
    public var size: Int
    public var p50_us: Double
    public var p90_us: Double
    public var p99_us: Double
    public var max_us: Double
    public var mean_us: Double

    public init(
        transport: String, channel: String, count: Int, size: Int, p50_us: Double, p90_us: Double, p99_us: Double,
        max_us: Double, mean_us: Double
    ) {
        self.transport = transport
        self.channel = channel
        self.count = count
        self.size = size
        self.p50_us = p50_us
        self.p90_us = p90_us
        self.p99_us = p99_us
        self.max_us = max_us
        self.mean_us = mean_us
    }
}

/// `send`: how many peers the message went to.
public struct SendResult: Codable, Hashable, Sendable {
    public var bytes: Int
    public var peers: [String]

    public init(bytes: Int, peers: [String]) {
        self.bytes = bytes
        self.peers = peers
    }
}

/// A resource transfer: `push` progress lines and its last line, `transfers`, and `transfer` events.
public struct TransferResult: Codable, Hashable, Sendable {
    /// "out:PEER/N" or "in:PEER/N".
    public var id: String
    public var peerID: String
    public var name: String
    /// sending or receiving.
    public var direction: String
    /// started, inProgress, finished, cancelled, failed.
    public var phase: String
    public var bytes: UInt64
    public var total: UInt64
    public var resumedFrom: UInt64
    /// finished: the SHA-256 (hex); on the receiver, where the file landed.
    public var sha256: String?
    public var path: String?
    /// cancelled, failed: why.
    public var reason: String?
    /// push's last line: seconds from the start to the verified end, and the throughput in MB/s (10^6 bytes).
    public var seconds: Double?
    public var megabytesPerSecond: Double?

    public init(
        id: String, peerID: String, name: String, direction: String, phase: String, bytes: UInt64, total: UInt64,
        resumedFrom: UInt64 = 0
    ) {
        self.id = id
        self.peerID = peerID
        self.name = name
        self.direction = direction
        self.phase = phase
        self.bytes = bytes
        self.total = total
        self.resumedFrom = resumedFrom
    }
}

/// `pairings`: one element per pairing under way.
public struct PairingResult: Codable, Hashable, Sendable {
    public var peerID: String
    public var name: String
    public var fingerprint: String
    /// The 6-digit code both devices show.
    public var code: String
    /// This side asked.
    public var requestedHere: Bool
    public var confirmedHere: Bool
    public var confirmedThere: Bool

    public init(
        peerID: String, name: String, fingerprint: String, code: String, requestedHere: Bool, confirmedHere: Bool,
        confirmedThere: Bool
    ) {
        self.peerID = peerID
        self.name = name
        self.fingerprint = fingerprint
        self.code = code
        self.requestedHere = requestedHere
        self.confirmedHere = confirmedHere
        self.confirmedThere = confirmedThere
    }
}

/// `pair`: the pairing under way (nil until a link to the device is up).
public struct PairResult: Codable, Hashable, Sendable {
    public var pairing: PairingResult?
    /// `pair --confirm`: this side confirmed; the pair is made when the other side has too.
    public var confirmed: Bool
    /// The pair is made (both sides confirmed).
    public var paired: Bool

    public init(pairing: PairingResult?, confirmed: Bool = false, paired: Bool = false) {
        self.pairing = pairing
        self.confirmed = confirmed
        self.paired = paired
    }
}

/// `devices`: one element per trusted device.
public struct DeviceResult: Codable, Hashable, Sendable {
    public var peerID: String
    public var name: String
    public var fingerprint: String
    /// paired or introduced.
    public var trust: String
    /// When it got in, ISO 8601.
    public var since: String
    /// Who introduced it (nil when paired here).
    public var by: String?
    public var version: UInt64

    public init(
        peerID: String, name: String, fingerprint: String, trust: String, since: String, by: String?, version: UInt64
    ) {
        self.peerID = peerID
        self.name = name
        self.fingerprint = fingerprint
        self.trust = trust
        self.since = since
        self.by = by
        self.version = version
    }
}

/// A byte stream: the last reply of `stream` (direction sending) and each line of `streams` (direction receiving).
public struct StreamResult: Codable, Hashable, Sendable {
    /// The other side.
    public var peerID: String
    /// The opener's name for the stream.
    public var name: String
    /// The stream's number, chosen by the opener.
    public var id: UInt32
    /// sending or receiving.
    public var direction: String
    /// opened, finished or failed.
    public var phase: String
    /// Bytes sent, or read, so far.
    public var bytes: UInt64
    /// finished: the SHA-256 (hex) of every byte of the stream.
    public var sha256: String?
    /// failed: why.
    public var reason: String?
    /// finished: seconds from the open to the end.
    public var seconds: Double?

    public init(peerID: String, name: String, id: UInt32, direction: String, phase: String, bytes: UInt64) {
        self.peerID = peerID
        self.name = name
        self.id = id
        self.direction = direction
        self.phase = phase
        self.bytes = bytes
    }
}

/// Where the page is: `web`.
public struct WebResult: Codable, Hashable, Sendable {
    /// The address to open, with the page's token.
    public var url: String
    /// What the daemon listens on for it (ADDR:PORT).
    public var listening: String

    public init(url: String, listening: String) {
        self.url = url
        self.listening = listening
    }
}
