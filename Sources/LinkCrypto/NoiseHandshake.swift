import Crypto

/// One side of a link's handshake, as a plain value: the Noise Protocol Framework (revision 34), pattern XX, on
/// X25519, ChaCha20-Poly1305 or AES-256-GCM (``NoiseCipher``), and SHA-256 — `Noise_XX_25519_ChaChaPoly_SHA256` or
/// `Noise_XX_25519_AESGCM_SHA256`, or with the session's pre-shared key `Noise_XXpsk3_25519_ChaChaPoly_SHA256` or
/// `Noise_XXpsk3_25519_AESGCM_SHA256`:
///
/// ```
/// -> e
/// <- e, ee, s, es
/// -> s, se (, psk)
/// ```
///
/// Each side writes and reads messages in turn (``isMyTurn``) until ``isComplete``; then ``split()`` gives the
/// link's keys. Any error ends the handshake: every later call throws.
public struct NoiseHandshake: Sendable {
    /// Who writes the first message.
    public enum Role: Hashable, Sendable {
        case initiator
        case responder
    }

    /// The tokens of the message patterns.
    private enum Token: Sendable {
        case e, s, ee, es, se, psk
    }

    /// This side's role.
    public let role: Role
    /// The protocol's cipher: the handshake's, and the link's keys'.
    public let cipher: NoiseCipher
    private let localStatic: Curve25519.KeyAgreement.PrivateKey
    private let localEphemeral: Curve25519.KeyAgreement.PrivateKey
    private let psk: [UInt8]?
    private var symmetric: SymmetricState
    private var remoteEphemeral: Curve25519.KeyAgreement.PublicKey?
    private var remoteStatic: Curve25519.KeyAgreement.PublicKey?
    /// The messages written or read so far.
    private var messageIndex = 0
    /// An error ended the handshake.
    private var isDead = false

    /// The largest handshake message (the spec's limit).
    public static let maxMessageLength = 65535

    /// The Noise protocol name: with the pre-shared key (`psk3`) or without, and the cipher's name.
    public static func protocolName(psk: Bool, cipher: NoiseCipher = .chaChaPoly) -> String {
        "Noise_\(psk ? "XXpsk3" : "XX")_25519_\(cipher.protocolNamePart)_SHA256"
    }

    /// A handshake with this side's static key, the `prologue` both sides must agree on, the session's pre-shared
    /// key if it has one, and the cipher both sides chose (``NoiseCipher/choice(between:and:)``). `ephemeral` is for
    /// tests and vectors only: nil takes a fresh random key.
    public init(
        role: Role, staticKey: Curve25519.KeyAgreement.PrivateKey, prologue: [UInt8], psk: SessionSecret?,
        cipher: NoiseCipher = .chaChaPoly, ephemeral: Curve25519.KeyAgreement.PrivateKey? = nil
    ) {
        self.role = role
        self.cipher = cipher
        self.localStatic = staticKey
        self.localEphemeral = ephemeral ?? Curve25519.KeyAgreement.PrivateKey()
        self.psk = psk?.psk
        symmetric = SymmetricState(protocolName: Self.protocolName(psk: psk != nil, cipher: cipher), cipher: cipher)
        symmetric.mixHash(prologue)
    }

    /// The next message is ours to write.
    public var isMyTurn: Bool {
        !isDead && messageIndex < 3 && (messageIndex % 2 == 0) == (role == .initiator)
    }

    /// All three messages went through.
    public var isComplete: Bool { !isDead && messageIndex == 3 }

    /// The peer's static public key (32 bytes), once learnt: the initiator's after message 2, the responder's after
    /// message 3.
    public var remoteStaticKey: [UInt8]? { remoteStatic.map { Array($0.rawRepresentation) } }

    /// The handshake hash `h` (32 bytes); final once complete.
    public var handshakeHash: [UInt8] { symmetric.hash }

    /// The tokens of message `index` (0, 1, 2).
    private func tokens(_ index: Int) -> [Token] {
        switch index {
        case 0: return [.e]
        case 1: return [.e, .ee, .s, .es]
        default: return psk == nil ? [.s, .se] : [.s, .se, .psk]
        }
    }

    /// Writes the next message, carrying `payload` (encrypted once there is a key).
    public mutating func writeMessage(payload: [UInt8]) throws(LinkCryptoError) -> [UInt8] {
        do throws(LinkCryptoError) {
            guard isMyTurn else { throw outOfTurn("write") }
            var message: [UInt8] = []
            for token in tokens(messageIndex) {
                switch token {
                case .e:
                    let key = Array(localEphemeral.publicKey.rawRepresentation)
                    message += key
                    mixEphemeral(key)
                case .s:
                    message += try symmetric.encryptAndHash(Array(localStatic.publicKey.rawRepresentation))
                default:
                    try mix(token)
                }
            }
            message += try symmetric.encryptAndHash(payload)
            guard message.count <= Self.maxMessageLength else {
                throw LinkCryptoError(.handshakeFailed, "a message of \(message.count) bytes is too long")
            }
            messageIndex += 1
            return message
        } catch {
            isDead = true
            throw error
        }
    }

    /// Reads the peer's next message; returns its payload. A message of a wrong length, or that fails
    /// authentication, throws.
    public mutating func readMessage(_ message: [UInt8]) throws(LinkCryptoError) -> [UInt8] {
        do throws(LinkCryptoError) {
            guard !isDead, messageIndex < 3, !isMyTurn else { throw outOfTurn("read") }
            guard message.count <= Self.maxMessageLength else {
                throw LinkCryptoError(.handshakeFailed, "a message of \(message.count) bytes is too long")
            }
            var offset = 0
            func take(_ count: Int) throws(LinkCryptoError) -> [UInt8] {
                guard message.count - offset >= count else {
                    throw LinkCryptoError(.handshakeFailed, "message \(messageIndex + 1) is too short")
                }
                defer { offset += count }
                return Array(message[offset..<(offset + count)])
            }
            for token in tokens(messageIndex) {
                switch token {
                case .e:
                    let key = try take(32)
                    remoteEphemeral = try Self.publicKey(key)
                    mixEphemeral(key)
                case .s:
                    let key = try symmetric.decryptAndHash(try take(symmetric.cipher.hasKey ? 48 : 32))
                    remoteStatic = try Self.publicKey(key)
                default:
                    try mix(token)
                }
            }
            let payload = try symmetric.decryptAndHash(Array(message[offset...]))
            messageIndex += 1
            return payload
        } catch {
            isDead = true
            guard error.code == .badTag else { throw error }
            throw LinkCryptoError(.handshakeFailed, "message \(messageIndex + 1) fails authentication")
        }
    }

    /// The link's keys, once complete: the transport keys of `Split()`, the datagram keys and the pairing code.
    public func split() throws(LinkCryptoError) -> LinkKeys {
        guard isComplete else { throw LinkCryptoError(.handshakeFailed, "the handshake is not complete") }
        let stream = symmetric.split()
        let datagrams = symmetric.derive(inputKeyMaterial: Array(Labels.datagrams.utf8))
        let initiator = role == .initiator
        return LinkKeys(
            cipher: cipher, handshakeHash: symmetric.hash,
            sendStream: initiator ? stream.initiator : stream.responder,
            receiveStream: initiator ? stream.responder : stream.initiator,
            sendDatagrams: initiator ? datagrams.initiator : datagrams.responder,
            receiveDatagrams: initiator ? datagrams.responder : datagrams.initiator)
    }

    private func outOfTurn(_ what: String) -> LinkCryptoError {
        if isDead { return LinkCryptoError(.handshakeFailed, "the handshake failed before") }
        if messageIndex >= 3 { return LinkCryptoError(.handshakeFailed, "the handshake is complete") }
        return LinkCryptoError(.handshakeFailed, "cannot \(what) message \(messageIndex + 1) as the \(role)")
    }

    /// The `e` token's hashing, and with a pre-shared key its `MixKey` (section 9.2).
    private mutating func mixEphemeral(_ key: [UInt8]) {
        symmetric.mixHash(key)
        if psk != nil { symmetric.mixKey(key) }
    }

    /// The tokens `ee`, `es`, `se` and `psk`.
    private mutating func mix(_ token: Token) throws(LinkCryptoError) {
        let initiator = role == .initiator
        switch token {
        case .ee: symmetric.mixKey(try Self.dh(localEphemeral, remoteEphemeral))
        case .es:
            symmetric.mixKey(
                try initiator ? Self.dh(localEphemeral, remoteStatic) : Self.dh(localStatic, remoteEphemeral))
        case .se:
            symmetric.mixKey(
                try initiator ? Self.dh(localStatic, remoteEphemeral) : Self.dh(localEphemeral, remoteStatic))
        case .psk: symmetric.mixKeyAndHash(psk ?? [])
        case .e, .s: break
        }
    }

    private static func publicKey(_ bytes: [UInt8]) throws(LinkCryptoError) -> Curve25519.KeyAgreement.PublicKey {
        do {
            return try Curve25519.KeyAgreement.PublicKey(rawRepresentation: bytes)
        } catch {
            throw LinkCryptoError(.badPublicKey, "\(error)")
        }
    }

    /// `DH(key, peer)`; an all-zero result (a low-order point) is refused.
    private static func dh(
        _ key: Curve25519.KeyAgreement.PrivateKey, _ peer: Curve25519.KeyAgreement.PublicKey?
    ) throws(LinkCryptoError) -> [UInt8] {
        guard let peer else { throw LinkCryptoError(.handshakeFailed, "no peer key for a DH") }
        let shared: [UInt8]
        do {
            shared = try key.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Array($0) }
        } catch {
            throw LinkCryptoError(.badPublicKey, "\(error)")
        }
        guard shared.reduce(0, |) != 0 else {
            throw LinkCryptoError(.badPublicKey, "the peer's key is of low order: the shared secret is zero")
        }
        return shared
    }
}
