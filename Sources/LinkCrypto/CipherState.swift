import Crypto
import Foundation

/// Noise's `CipherState` (revision 34, section 5.1) for ChaChaPoly: a key, or none yet, and the next nonce.
///
/// Nonce 2^64-1 is never used for data: it is reserved for ``rekey()``.
struct CipherState: Sendable {
    private(set) var key: SymmetricKey?
    /// The next nonce.
    private(set) var nonce: UInt64 = 0

    /// `InitializeKey(key)`: the nonce starts at 0.
    init(key: SymmetricKey?) {
        self.key = key
    }

    var hasKey: Bool { key != nil }

    /// `EncryptWithAd(ad, plaintext)`, appended to `output`: the ciphertext and tag, or the plaintext without a key.
    mutating func encrypt(
        ad: [UInt8], _ plaintext: UnsafeRawBufferPointer, into output: inout [UInt8]
    ) throws(LinkCryptoError) {
        guard let key else {
            output += plaintext
            return
        }
        guard nonce < UInt64.max else { throw LinkCryptoError(.nonceExhausted, "nonce 2^64-1 reached") }
        try Nonces.seal(plaintext, header: ad, key: key, counter: nonce, into: &output)
        nonce += 1
    }

    /// `DecryptWithAd(ad, ciphertext)`: the plaintext, or `ciphertext` itself without a key. A failure leaves the
    /// nonce as it was.
    mutating func decrypt(ad: [UInt8], _ ciphertext: UnsafeRawBufferPointer) throws(LinkCryptoError) -> [UInt8] {
        guard let key else { return Array(ciphertext) }
        guard nonce < UInt64.max else { throw LinkCryptoError(.nonceExhausted, "nonce 2^64-1 reached") }
        guard ciphertext.count >= Nonces.tagLength else {
            throw LinkCryptoError(.badTag, "\(ciphertext.count) bytes cannot hold a tag")
        }
        let tagStart = ciphertext.count - Nonces.tagLength
        let plaintext = try Nonces.open(
            UnsafeRawBufferPointer(rebasing: ciphertext[..<tagStart]),
            tag: UnsafeRawBufferPointer(rebasing: ciphertext[tagStart...]), header: ad, key: key, counter: nonce)
        nonce += 1
        return plaintext
    }

    /// `Rekey()`: the key becomes the first 32 bytes of `ENCRYPT(k, 2^64-1, zerolen, zeros(32))`; the nonce goes on.
    mutating func rekey() throws(LinkCryptoError) {
        guard let key else { return }
        do {
            let box = try ChaChaPoly.seal(
                [UInt8](repeating: 0, count: 32), using: key, nonce: try Nonces.make(UInt64.max))
            self.key = SymmetricKey(data: box.ciphertext.prefix(32))
        } catch {
            throw LinkCryptoError(.library, "\(error)")
        }
    }
}
