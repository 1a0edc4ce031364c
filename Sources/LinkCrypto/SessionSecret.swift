import Crypto

/// The session's shared secret, as the handshake uses it: the 32-byte pre-shared key of
/// `Noise_XXpsk3_25519_ChaChaPoly_SHA256`, derived from the secret and the session's name, so that one secret used for
/// two sessions gives two unrelated keys.
public struct SessionSecret: Sendable {
    /// The pre-shared key (32 bytes).
    let psk: [UInt8]

    /// Derives the pre-shared key: HKDF-SHA256 with the secret as input key material, ``Labels/secret`` as salt and
    /// the session's name as info. The secret must not be empty.
    public init(secret: [UInt8], sessionName: String) throws(LinkCryptoError) {
        guard !secret.isEmpty else { throw LinkCryptoError(.emptySecret, "the secret is empty") }
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), salt: Array(Labels.secret.utf8),
            info: Array(sessionName.utf8), outputByteCount: 32)
        psk = key.withUnsafeBytes { Array($0) }
    }

    /// Takes `psk` as the pre-shared key itself, without derivation (test vectors); it must be 32 bytes.
    public init(psk: [UInt8]) throws(LinkCryptoError) {
        guard psk.count == 32 else {
            throw LinkCryptoError(.emptySecret, "a pre-shared key has 32 bytes, not \(psk.count)")
        }
        self.psk = psk
    }
}

/// The constant strings of the construction, besides Noise's own.
enum Labels {
    /// The salt of the pre-shared key's derivation.
    static let secret = "LanSession v3 secret"
    /// The input key material, with the final chaining key, of the datagram keys.
    static let datagrams = "LanSession v3 datagrams"
    /// Hashed before the handshake hash for the pairing code.
    static let pairingCode = "LanSession v3 pairing code"
}
