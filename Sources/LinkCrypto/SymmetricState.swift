import Crypto

/// Noise's `SymmetricState` (revision 34, section 5.2) with SHA256: the chaining key, the handshake hash and the
/// handshake's ``CipherState``, for the protocol's cipher.
struct SymmetricState: Sendable {
    /// The protocol's cipher: the handshake's, and the transport keys'.
    let cipherKind: NoiseCipher
    /// `ck`.
    private(set) var chainingKey: [UInt8]
    /// `h`.
    private(set) var hash: [UInt8]
    private(set) var cipher: CipherState

    /// `InitializeSymmetric(protocol_name)`, for a protocol whose cipher is `cipher`.
    init(protocolName: String, cipher: NoiseCipher) {
        cipherKind = cipher
        self.cipher = CipherState(key: nil, cipher: cipher)
        let name = Array(protocolName.utf8)
        hash = name.count <= 32 ? name + [UInt8](repeating: 0, count: 32 - name.count) : Array(SHA256.hash(data: name))
        chainingKey = hash
    }

    /// `MixKey(input_key_material)`.
    mutating func mixKey(_ inputKeyMaterial: [UInt8]) {
        let output = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 2)
        chainingKey = output[0]
        cipher = CipherState(key: SymmetricKey(data: output[1]), cipher: cipherKind)
    }

    /// `MixHash(data)`.
    mutating func mixHash(_ data: [UInt8]) {
        var hasher = SHA256()
        hasher.update(data: hash)
        hasher.update(data: data)
        hash = Array(hasher.finalize())
    }

    /// `MixKeyAndHash(input_key_material)`.
    mutating func mixKeyAndHash(_ inputKeyMaterial: [UInt8]) {
        let output = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 3)
        chainingKey = output[0]
        mixHash(output[1])
        cipher = CipherState(key: SymmetricKey(data: output[2]), cipher: cipherKind)
    }

    /// `EncryptAndHash(plaintext)`.
    mutating func encryptAndHash(_ plaintext: [UInt8]) throws(LinkCryptoError) -> [UInt8] {
        var ciphertext: [UInt8] = []
        let ad = hash
        // `withUnsafeBytes` rethrows untyped: the error goes through a `Result`.
        let result = plaintext.withUnsafeBytes { raw in
            Result { () throws(LinkCryptoError) in try cipher.encrypt(ad: ad, raw, into: &ciphertext) }
        }
        try result.get()
        mixHash(ciphertext)
        return ciphertext
    }

    /// `DecryptAndHash(ciphertext)`.
    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(LinkCryptoError) -> [UInt8] {
        let ad = hash
        let result = ciphertext.withUnsafeBytes { raw in
            Result { () throws(LinkCryptoError) in try cipher.decrypt(ad: ad, raw) }
        }
        let plaintext = try result.get()
        mixHash(ciphertext)
        return plaintext
    }

    /// `Split()`: the keys of the initiator's and of the responder's transport messages.
    func split() -> (initiator: SymmetricKey, responder: SymmetricKey) {
        derive(inputKeyMaterial: [])
    }

    /// Two keys as `Split()` makes them, but with `inputKeyMaterial` instead of zerolen: other keys from the final
    /// chaining key, for the initiator's and the responder's side.
    func derive(inputKeyMaterial: [UInt8]) -> (initiator: SymmetricKey, responder: SymmetricKey) {
        let output = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 2)
        return (SymmetricKey(data: output[0]), SymmetricKey(data: output[1]))
    }

    /// Noise's `HKDF(chaining_key, input_key_material, num_outputs)` with HMAC-SHA256 (section 4.3).
    static func hkdf(chainingKey: [UInt8], inputKeyMaterial: [UInt8], outputs: Int) -> [[UInt8]] {
        let tempKey = SymmetricKey(
            data: HMAC<SHA256>.authenticationCode(for: inputKeyMaterial, using: SymmetricKey(data: chainingKey)))
        var result: [[UInt8]] = []
        var previous: [UInt8] = []
        for index in 1...outputs {
            previous = Array(HMAC<SHA256>.authenticationCode(for: previous + [UInt8(index)], using: tempKey))
            result.append(previous)
        }
        return result
    }
}
