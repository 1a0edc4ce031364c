import Crypto
import Foundation
import WireCodec

/// Seals what one side sends on a stream after the handshake, as records.
///
/// A record is `u16le length || message`, where `message` is exactly a Noise transport message: the side's
/// ``CipherState`` from `Split()`, `EncryptWithAd(zerolen, plaintext)` — the link's cipher (ChaCha20-Poly1305 with
/// nonce 4 zero bytes and `u64le n`, or AES-256-GCM with 4 zero bytes and `u64be n`), `n` = 0, 1, 2… one per record,
/// no additional data — so that any Noise implementation opens it with its own `decrypt`. `length` counts the
/// ciphertext and the 16-byte tag; the plaintext is at most `Wire.maxRecordPlaintext` bytes. After every
/// ``rekeyInterval`` records both sides call Noise's `Rekey()` (the nonces go on). Nonces never repeat: the sealer
/// refuses to go on when they run out.
public struct RecordSealer {
    private var cipher: CipherState
    private let rekeyEvery: UInt64

    /// The next record's number (its nonce).
    public var counter: UInt64 { cipher.nonce }

    /// Bytes a record header takes.
    public static let headerLength = 2

    /// Records of a direction between two `Rekey()`s.
    public static let rekeyInterval: UInt64 = 1 << 20

    init(key: SymmetricKey, cipher kind: NoiseCipher, rekeyInterval: UInt64 = RecordSealer.rekeyInterval) {
        cipher = CipherState(key: key, cipher: kind)
        rekeyEvery = rekeyInterval
    }

    /// Bytes ``seal(_:into:)-(_,UnsafeMutableRawBufferPointer)`` writes for `count` bytes of plaintext: a header and a
    /// tag for each record of at most `Wire.maxRecordPlaintext` bytes.
    public static func sealedSize(of count: Int) -> Int {
        let records = max(1, (count + Wire.maxRecordPlaintext - 1) / Wire.maxRecordPlaintext)
        return count + records * (headerLength + Wire.sealTagLength)
    }

    /// Seals `plaintext` as one record or more (at most `Wire.maxRecordPlaintext` bytes each), written to the first
    /// ``sealedSize(of:)`` bytes of `output`.
    public mutating func seal(
        _ plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) {
        try seal(plaintext, UnsafeRawBufferPointer(start: nil, count: 0), into: output)
    }

    /// Seals the plaintext `plaintext` then `rest` (given in two parts, each read where it lies) as one record or
    /// more, exactly as ``seal(_:into:)-(_,UnsafeMutableRawBufferPointer)`` seals the two back to back: a record may
    /// hold the end of one part and the start of the other.
    public mutating func seal(
        _ plaintext: UnsafeRawBufferPointer, _ rest: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) {
        let total = plaintext.count + rest.count
        precondition(output.count >= Self.sealedSize(of: total), "no room for the records")
        var offset = 0
        var written = 0
        repeat {
            let end = min(total, offset + Wire.maxRecordPlaintext)
            guard cipher.nonce < UInt64.max else { throw LinkCryptoError(.nonceExhausted, "2^64-1 records sealed") }
            let length = end - offset + Wire.sealTagLength
            output[written] = UInt8(length & 0xff)
            output[written + 1] = UInt8(length >> 8)
            let recordEnd = written + Self.headerLength + length
            let first = min(offset, plaintext.count)..<min(end, plaintext.count)
            let second = max(offset - plaintext.count, 0)..<max(end - plaintext.count, 0)
            try cipher.encrypt(
                ad: UnsafeRawBufferPointer(start: nil, count: 0),
                UnsafeRawBufferPointer(rebasing: plaintext[first]), UnsafeRawBufferPointer(rebasing: rest[second]),
                into: UnsafeMutableRawBufferPointer(rebasing: output[(written + Self.headerLength)..<recordEnd]))
            if cipher.nonce % rekeyEvery == 0 { try cipher.rekey() }
            offset = end
            written = recordEnd
        } while offset < total
    }

    /// Seals `plaintext` as one record or more, appended to `output`.
    public mutating func seal(_ plaintext: UnsafeRawBufferPointer, into output: inout [UInt8]) throws(LinkCryptoError) {
        let start = output.count
        let size = Self.sealedSize(of: plaintext.count)
        output += repeatElement(0, count: size)
        let result = output.withUnsafeMutableBytes { raw in
            Result { () throws(LinkCryptoError) in
                try seal(plaintext, into: UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
            }
        }
        if case .failure = result { output.removeLast(size) }
        try result.get()
    }
}
