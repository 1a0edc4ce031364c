import Crypto
import WireCodec

/// One of Noise's ciphers with one key (`ENCRYPT` and `DECRYPT`, Noise revision 34, section 4.2): what a
/// ``CipherState`` and the datagram sealers hold. ``NoiseCipher/makeCipher(key:)`` makes one.
protocol AEADCipher: AnyObject, Sendable {
    /// A cipher for `key` (32 bytes).
    init(key: SymmetricKey)

    /// Seals the plaintext `plaintext` then `rest` (one message in two parts) with `additional` data under nonce
    /// `counter`: the ciphertext, then the tag, written to the first ``sealedSize(of:)`` bytes of `output` (which may
    /// be the plaintext's own bytes).
    func seal(
        _ plaintext: UnsafeRawBufferPointer, _ rest: UnsafeRawBufferPointer, additional: UnsafeRawBufferPointer,
        counter: UInt64, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError)

    /// Opens `ciphertext` and `tag` with `additional` data under nonce `counter`, writing the plaintext to the first
    /// `ciphertext.count` bytes of `output` (which may be the ciphertext's own bytes). A message that fails
    /// authentication throws ``LinkCryptoError/Code/badTag``; what `output` holds then is not to be used.
    func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, additional: UnsafeRawBufferPointer,
        counter: UInt64, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError)
}

extension AEADCipher {
    /// Seals `plaintext` (one part).
    func seal(
        _ plaintext: UnsafeRawBufferPointer, additional: UnsafeRawBufferPointer, counter: UInt64,
        into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) {
        try seal(
            plaintext, UnsafeRawBufferPointer(start: nil, count: 0), additional: additional, counter: counter,
            into: output)
    }

    /// The key's length.
    static var keyLength: Int { EVPAEAD.keyLength }

    /// Bytes sealing `count` bytes of plaintext makes: the ciphertext and the 16-byte tag.
    static func sealedSize(of count: Int) -> Int { EVPAEAD.sealedSize(of: count) }
}
