import Crypto
import Foundation
import WireCodec

/// Noise's `CipherState` (revision 34, section 5.1) for ChaChaPoly or AESGCM: a key, or none yet, and the next
/// nonce.
///
/// Nonce 2^64-1 is never used for data: it is reserved for ``rekey()``.
struct CipherState: Sendable {
    /// Which cipher the key is for.
    let kind: NoiseCipher
    private(set) var cipher: (any AEADCipher)?
    /// The next nonce.
    private(set) var nonce: UInt64 = 0

    /// `InitializeKey(key)` for the `kind` cipher: the nonce starts at 0.
    init(key: SymmetricKey?, cipher kind: NoiseCipher) {
        self.kind = kind
        cipher = key.map(kind.makeCipher(key:))
    }

    var hasKey: Bool { cipher != nil }

    /// Bytes ``encrypt(ad:_:into:)-(_,_,UnsafeMutableRawBufferPointer)`` writes for `count` bytes of plaintext.
    func encryptedSize(of count: Int) -> Int {
        cipher == nil ? count : EVPAEAD.sealedSize(of: count)
    }

    /// `EncryptWithAd(ad, plaintext)`, written to the first ``encryptedSize(of:)`` bytes of `output`: the ciphertext
    /// and tag, or the plaintext without a key.
    mutating func encrypt(
        ad: UnsafeRawBufferPointer, _ plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) {
        try encrypt(ad: ad, plaintext, UnsafeRawBufferPointer(start: nil, count: 0), into: output)
    }

    /// `EncryptWithAd(ad, plaintext || rest)`: the plaintext given in two parts, each read where it lies.
    mutating func encrypt(
        ad: UnsafeRawBufferPointer, _ plaintext: UnsafeRawBufferPointer, _ rest: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) {
        guard let cipher else {
            output.copyMemory(from: plaintext)
            UnsafeMutableRawBufferPointer(rebasing: output[plaintext.count...]).copyMemory(from: rest)
            return
        }
        guard nonce < UInt64.max else { throw LinkCryptoError(.nonceExhausted, "nonce 2^64-1 reached") }
        try cipher.seal(plaintext, rest, additional: ad, counter: nonce, into: output)
        nonce += 1
    }

    /// `EncryptWithAd(ad, plaintext)`, appended to `output`.
    mutating func encrypt(
        ad: [UInt8], _ plaintext: UnsafeRawBufferPointer, into output: inout [UInt8]
    ) throws(LinkCryptoError) {
        let start = output.count
        let size = encryptedSize(of: plaintext.count)
        output += repeatElement(0, count: size)
        let result = ad.withUnsafeBytes { ad in
            output.withUnsafeMutableBytes { raw in
                Result { () throws(LinkCryptoError) in
                    try encrypt(ad: ad, plaintext, into: UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
                }
            }
        }
        if case .failure = result { output.removeLast(size) }
        try result.get()
    }

    /// `DecryptWithAd(ad, ciphertext)`, written to the first `ciphertext.count - 16` bytes of `output` (all of them
    /// without a key); returns the plaintext's length. A failure leaves the nonce as it was.
    mutating func decrypt(
        ad: UnsafeRawBufferPointer, _ ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) -> Int {
        guard let cipher else {
            output.copyMemory(from: ciphertext)
            return ciphertext.count
        }
        guard nonce < UInt64.max else { throw LinkCryptoError(.nonceExhausted, "nonce 2^64-1 reached") }
        guard ciphertext.count >= Wire.sealTagLength else {
            throw LinkCryptoError(.badTag, "\(ciphertext.count) bytes cannot hold a tag")
        }
        let tagStart = ciphertext.count - Wire.sealTagLength
        try cipher.open(
            UnsafeRawBufferPointer(rebasing: ciphertext[..<tagStart]),
            tag: UnsafeRawBufferPointer(rebasing: ciphertext[tagStart...]), additional: ad, counter: nonce,
            into: output)
        nonce += 1
        return tagStart
    }

    /// `DecryptWithAd(ad, ciphertext)`: the plaintext, or `ciphertext` itself without a key.
    mutating func decrypt(ad: [UInt8], _ ciphertext: UnsafeRawBufferPointer) throws(LinkCryptoError) -> [UInt8] {
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        let result = ad.withUnsafeBytes { ad in
            plaintext.withUnsafeMutableBytes { raw in
                Result { () throws(LinkCryptoError) in try decrypt(ad: ad, ciphertext, into: raw) }
            }
        }
        plaintext.removeLast(ciphertext.count - (try result.get()))
        return plaintext
    }

    /// `Rekey()`: the key becomes the first 32 bytes of `ENCRYPT(k, 2^64-1, zerolen, zeros(32))`; the nonce goes on.
    mutating func rekey() throws(LinkCryptoError) {
        guard let cipher else { return }
        let zeros = [UInt8](repeating: 0, count: EVPAEAD.keyLength)
        var sealed = [UInt8](repeating: 0, count: EVPAEAD.sealedSize(of: zeros.count))
        let result = zeros.withUnsafeBytes { plaintext in
            sealed.withUnsafeMutableBytes { raw in
                Result { () throws(LinkCryptoError) in
                    try cipher.seal(
                        plaintext, additional: UnsafeRawBufferPointer(start: nil, count: 0),
                        counter: UInt64.max, into: raw)
                }
            }
        }
        try result.get()
        self.cipher = kind.makeCipher(key: SymmetricKey(data: sealed.prefix(EVPAEAD.keyLength)))
    }
}
