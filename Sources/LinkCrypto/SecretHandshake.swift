import Crypto

/// One side's part of the secret handshake of a link, as a plain value.
///
/// The construction follows Noise's `NNpsk0` pattern with explicit key confirmation, on swift-crypto's primitives:
/// each hello carries a fresh X25519 key; the shared secret of the two keys is extracted with HKDF-SHA256 salted
/// with the session's key (``SessionSecret``); the keys are expanded with the transcript hash of both hellos — peer
/// ids, incarnations, session name and both ephemeral keys — as context. Each side proves that it holds the same
/// keys with an HMAC-SHA256 of the transcript under its own confirmation key (`auth`). Without the secret the keys
/// differ and the proof fails; a replayed handshake meets a fresh ephemeral key of the other side and fails too.
public struct SecretHandshake: Sendable {
    /// Which side opened the link: the transcript orders the hellos by it, and each direction has its own keys.
    public enum Role: Hashable, Sendable {
        case dialer
        case acceptor
    }

    public let role: Role
    private let privateKey: Curve25519.KeyAgreement.PrivateKey

    /// A handshake with a fresh ephemeral key.
    public init(role: Role) {
        self.role = role
        self.privateKey = Curve25519.KeyAgreement.PrivateKey()
    }

    /// The ephemeral public key this side puts in its hello (`Wire.authKeyLength` bytes).
    public var publicKey: [UInt8] { Array(privateKey.publicKey.rawRepresentation) }

    /// Derives the link's keys from both hellos, as encoded on the wire (message bodies), and the peer's public key.
    public func keys(
        secret: SessionSecret, localHello: [UInt8], remoteHello: [UInt8], remoteKey: [UInt8]
    ) throws(LinkCryptoError) -> LinkKeys {
        let peerKey: Curve25519.KeyAgreement.PublicKey
        let shared: SharedSecret
        do {
            peerKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: remoteKey)
            shared = try privateKey.sharedSecretFromKeyAgreement(with: peerKey)
        } catch {
            throw LinkCryptoError(.badPublicKey, "\(error)")
        }
        let (dialerHello, acceptorHello) = role == .dialer ? (localHello, remoteHello) : (remoteHello, localHello)
        var hash = SHA256()
        hash.update(data: Array(Labels.transcript.utf8))
        for hello in [dialerHello, acceptorHello] {
            let length = UInt32(hello.count)
            hash.update(data: [
                UInt8(length & 0xff), UInt8(length >> 8 & 0xff), UInt8(length >> 16 & 0xff), UInt8(length >> 24),
            ])
            hash.update(data: hello)
        }
        let transcript = Array(hash.finalize())
        let material = shared.withUnsafeBytes { SymmetricKey(data: $0) }
        let pseudoRandomKey = secret.key.withUnsafeBytes { salt in
            HKDF<SHA256>.extract(inputKeyMaterial: material, salt: salt)
        }
        let expanded = HKDF<SHA256>.expand(
            pseudoRandomKey: pseudoRandomKey, info: Array(Labels.keys.utf8) + transcript, outputByteCount: 6 * 32)
        let bytes = expanded.withUnsafeBytes { Array($0) }
        func key(_ index: Int) -> SymmetricKey { SymmetricKey(data: bytes[index * 32..<(index + 1) * 32]) }
        // 0 dialer's confirmation, 1 acceptor's confirmation, 2 dialer→acceptor stream, 3 acceptor→dialer stream,
        // 4 dialer→acceptor datagrams, 5 acceptor→dialer datagrams.
        let dialer = role == .dialer
        return LinkKeys(
            transcript: transcript,
            localConfirmation: key(dialer ? 0 : 1), remoteConfirmation: key(dialer ? 1 : 0),
            sendStream: key(dialer ? 2 : 3), receiveStream: key(dialer ? 3 : 2),
            sendDatagrams: key(dialer ? 4 : 5), receiveDatagrams: key(dialer ? 5 : 4))
    }
}

/// The keys of one link, from ``SecretHandshake/keys(secret:localHello:remoteHello:remoteKey:)``.
public struct LinkKeys: Sendable {
    let transcript: [UInt8]
    let localConfirmation: SymmetricKey
    let remoteConfirmation: SymmetricKey
    let sendStream: SymmetricKey
    let receiveStream: SymmetricKey
    let sendDatagrams: SymmetricKey
    let receiveDatagrams: SymmetricKey

    /// This side's proof for its `auth` message.
    public var proof: [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: transcript, using: localConfirmation))
    }

    /// Checks the peer's proof, in constant time.
    public func verify(peerProof: [UInt8]) throws(LinkCryptoError) {
        guard HMAC<SHA256>.isValidAuthenticationCode(peerProof, authenticating: transcript, using: remoteConfirmation)
        else {
            throw LinkCryptoError(.proofMismatch, "the peer's proof does not match (wrong secret, or a replay)")
        }
    }

    /// Seals what this side sends on the stream.
    public func makeRecordSealer() -> RecordSealer { RecordSealer(key: sendStream) }
    /// Opens what the peer sends on the stream.
    public func makeRecordOpener() -> RecordOpener { RecordOpener(key: receiveStream) }
    /// Seals this side's datagrams.
    public func makeDatagramSealer() -> DatagramSealer { DatagramSealer(key: sendDatagrams) }
    /// Opens the peer's datagrams.
    public func makeDatagramOpener() -> DatagramOpener { DatagramOpener(key: receiveDatagrams) }
}
