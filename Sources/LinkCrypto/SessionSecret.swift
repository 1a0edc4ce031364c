import Crypto

/// The session's shared secret, as the handshake uses it: a 32-byte key derived from the secret and the session's
/// name, so that one secret used for two sessions gives two unrelated keys.
public struct SessionSecret: Sendable {
    let key: SymmetricKey

    /// Derives the key; the secret must not be empty.
    public init(secret: [UInt8], sessionName: String) throws(LinkCryptoError) {
        guard !secret.isEmpty else { throw LinkCryptoError(.emptySecret, "the secret is empty") }
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), salt: Array(Labels.secret.utf8),
            info: Array(sessionName.utf8), outputByteCount: 32)
    }
}

/// The constant strings of the construction; see docs/wire-format.md, section 9.
enum Labels {
    static let secret = "LanSession v2 secret"
    static let transcript = "LanSession v2 transcript"
    static let keys = "LanSession v2 keys"
}
