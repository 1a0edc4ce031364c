import Crypto
import Foundation

/// ChaCha20-Poly1305 with Noise's nonces (4 zero bytes and a `u64le` counter), shared by records, datagrams and the
/// handshake.
enum Nonces {
    /// The tag's length.
    static let tagLength = 16

    static func make(_ counter: UInt64) throws -> ChaChaPoly.Nonce {
        let words: (UInt32, UInt32, UInt32) = (
            0, UInt32(truncatingIfNeeded: counter).littleEndian, UInt32(truncatingIfNeeded: counter >> 32).littleEndian
        )
        return try withUnsafeBytes(of: words) { try ChaChaPoly.Nonce(data: $0) }
    }

    /// Appends the ciphertext and tag of `plaintext` to `output`.
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, header: some DataProtocol, key: SymmetricKey, counter: UInt64,
        into output: inout [UInt8]
    ) throws(LinkCryptoError) {
        do {
            let box = try ChaChaPoly.seal(plaintext, using: key, nonce: try make(counter), authenticating: header)
            output += box.ciphertext
            output += box.tag
        } catch {
            throw LinkCryptoError(.library, "\(error)")
        }
    }

    /// The plaintext of `ciphertext` and `tag`.
    static func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, header: some DataProtocol,
        key: SymmetricKey, counter: UInt64
    ) throws(LinkCryptoError) -> [UInt8] {
        do {
            let box = try ChaChaPoly.SealedBox(nonce: try make(counter), ciphertext: ciphertext, tag: tag)
            return Array(try ChaChaPoly.open(box, using: key, authenticating: header))
        } catch {
            throw LinkCryptoError(.badTag, "authentication failed (nonce \(counter))")
        }
    }
}
