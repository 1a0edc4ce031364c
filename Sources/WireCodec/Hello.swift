/// The first message on every link, sent by both sides.
public struct Hello: Hashable, Sendable {
    /// The sender's protocol version; see the versioning rule in `docs/wire-format.md`.
    public var protocolVersion: UInt32
    /// The sender's identity.
    public var peerID: PeerID
    /// Random per start of the sender's process: a new value tells the receiver that sequence numbers start over.
    public var incarnation: UInt64
    /// What the sender supports beyond the base protocol.
    public var capabilities: Capabilities
    /// UDP port the sender receives datagrams on; 0 when it has none.
    public var datagramPort: UInt16
    /// The sender's display name, at most `Wire.maxNameLength` UTF-8 bytes.
    public var displayName: String
    /// The session the sender belongs to, at most `Wire.maxNameLength` UTF-8 bytes.
    public var sessionName: String
    /// Typed extension values; receivers skip types they do not know.
    public var extensions: [HelloExtension]

    /// Creates a hello.
    @inlinable
    public init(
        protocolVersion: UInt32 = Wire.protocolVersion, peerID: PeerID, incarnation: UInt64 = 0,
        capabilities: Capabilities = [], datagramPort: UInt16 = 0, displayName: String, sessionName: String,
        extensions: [HelloExtension] = []
    ) {
        self.protocolVersion = protocolVersion
        self.peerID = peerID
        self.incarnation = incarnation
        self.capabilities = capabilities
        self.datagramPort = datagramPort
        self.displayName = displayName
        self.sessionName = sessionName
        self.extensions = extensions
    }
}

/// Capability flags announced in `hello`. Unknown bits are kept.
public struct Capabilities: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    @inlinable
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The sender listens for datagrams (the unreliable channel).
    public static let datagrams = Capabilities(rawValue: 1 << 0)
    /// The sender keeps a replay buffer and can resume a link from an `ack`.
    public static let resume = Capabilities(rawValue: 1 << 1)
    /// The sender runs the Noise handshake after the hellos and seals the link after it (section 9).
    public static let encryption = Capabilities(rawValue: 1 << 2)
    /// The sender takes `appMessage` (kind `0x35`): applications of its own, by number.
    public static let appMessages = Capabilities(rawValue: 1 << 3)
    /// The sender's handshake mixes in the session's pre-shared key (`Noise_XXpsk3_…`): it admits by the secret.
    public static let preSharedKey = Capabilities(rawValue: 1 << 4)
    /// The sender takes `durableData` (kind `0x36`): durable messages, each taken once across the sender's restarts.
    public static let durableData = Capabilities(rawValue: 1 << 5)
}

/// One typed value in a `hello`: room for later handshake features without a version bump.
public struct HelloExtension: Hashable, Sendable {
    /// The extension's type: 2 listen port, 3 ciphers (1 was the key of version 2's handshake); receivers skip the
    /// others.
    public var type: UInt16
    /// The extension's value, at most `Wire.maxHelloExtensionLength` bytes.
    public var value: [UInt8]

    /// Creates an extension value.
    @inlinable
    public init(type: UInt16, value: [UInt8]) {
        self.type = type
        self.value = value
    }

    /// The port the sender accepts stream links on (`u16le`), so that a peer it dialled learns where to dial it.
    public static let listenPortType: UInt16 = 2

    /// A listen-port extension.
    public static func listenPort(_ port: UInt16) -> HelloExtension {
        HelloExtension(type: listenPortType, value: [UInt8(truncatingIfNeeded: port), UInt8(port >> 8)])
    }

    /// The ciphers the sender takes for the link's Noise handshake and records, in its order of preference: one
    /// byte each, 1 ChaChaPoly, 2 AESGCM (docs/wire-format.md, section 9.2).
    public static let ciphersType: UInt16 = 3

    /// A cipher-list extension: `ciphers`, one byte each, in the sender's order of preference (1 to
    /// `Wire.maxHelloCiphers` of them).
    public static func ciphers(_ ciphers: [UInt8]) -> HelloExtension {
        precondition(
            (1...Wire.maxHelloCiphers).contains(ciphers.count), "a cipher list has 1...\(Wire.maxHelloCiphers)")
        return HelloExtension(type: ciphersType, value: ciphers)
    }
}

extension Hello {
    /// The port the sender accepts stream links on, from its listen-port extension; nil without one (or a malformed
    /// one: a value that is not two bytes, or port 0).
    public var listenPort: UInt16? {
        guard let value = extensions.first(where: { $0.type == HelloExtension.listenPortType })?.value,
            value.count == 2
        else { return nil }
        let port = UInt16(value[0]) | UInt16(value[1]) << 8
        return port == 0 ? nil : port
    }

    /// The ciphers the sender takes, in its order of preference, from its cipher-list extension (unknown numbers
    /// included); nil without one, or with a malformed one (empty, or longer than `Wire.maxHelloCiphers`).
    public var ciphers: [UInt8]? {
        guard let value = extensions.first(where: { $0.type == HelloExtension.ciphersType })?.value,
            (1...Wire.maxHelloCiphers).contains(value.count)
        else { return nil }
        return value
    }
}
