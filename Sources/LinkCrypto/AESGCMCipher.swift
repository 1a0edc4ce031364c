import COpenSSL
import Crypto

/// AES-256-GCM (NIST SP 800-38D) with one key, with Noise's nonces for AESGCM (4 zero bytes and a `u64be`
/// counter: big-endian, unlike ChaChaPoly's), on OpenSSL's libcrypto (``EVPAEAD``): one context per direction, no
/// allocation per record. Offered only where the CPU has AES instructions (``CPUFeatures/hasAES``), where it is
/// both fast and free of timing leaks through table lookups.
final class AESGCMCipher: EVPCipher {
    let aead: EVPAEAD

    /// A cipher for `key`.
    init(key: SymmetricKey) {
        aead = EVPAEAD(key: key, algorithm: EVP_aes_256_gcm(), name: "AES-256-GCM")
    }

    /// Noise's 12-byte nonce for AESGCM: 4 zero bytes and the counter, big-endian.
    static func nonce(_ counter: UInt64) -> (UInt32, UInt32, UInt32) {
        (0, UInt32(truncatingIfNeeded: counter >> 32).bigEndian, UInt32(truncatingIfNeeded: counter).bigEndian)
    }
}
