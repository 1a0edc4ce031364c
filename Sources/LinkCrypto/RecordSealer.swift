import Crypto
import Foundation
import WireCodec

/// Seals what one side sends on a stream after the handshake, as records.
///
/// A record is `u16le length || message`, where `message` is exactly a Noise transport message: the side's
/// ``CipherState`` from `Split()`, `EncryptWithAd(zerolen, plaintext)` — ChaCha20-Poly1305, nonce 4 zero bytes and
/// `u64le n` with `n` = 0, 1, 2… one per record, no additional data — so that any Noise implementation opens it with
/// its own `decrypt`. `length` counts the ciphertext and the 16-byte tag; the plaintext is at most
/// `Wire.maxRecordPlaintext` bytes. After every ``rekeyInterval`` records both sides call Noise's `Rekey()` (the
/// nonces go on). Nonces never repeat: the sealer refuses to go on when they run out.
public struct RecordSealer {
    private var cipher: CipherState
    private let rekeyEvery: UInt64

    /// The next record's number (its nonce).
    public var counter: UInt64 { cipher.nonce }

    /// Bytes a record header takes.
    public static let headerLength = 2

    /// Records of a direction between two `Rekey()`s.
    public static let rekeyInterval: UInt64 = 1 << 20

    init(key: SymmetricKey, rekeyInterval: UInt64 = RecordSealer.rekeyInterval) {
        cipher = CipherState(key: key)
        rekeyEvery = rekeyInterval
    }

    /// Seals `plaintext` as one record or more (at most `Wire.maxRecordPlaintext` bytes each), appended to `output`.
    public mutating func seal(_ plaintext: UnsafeRawBufferPointer, into output: inout [UInt8]) throws(LinkCryptoError) {
        var offset = 0
        repeat {
            let end = min(plaintext.count, offset + Wire.maxRecordPlaintext)
            try sealRecord(UnsafeRawBufferPointer(rebasing: plaintext[offset..<end]), into: &output)
            offset = end
        } while offset < plaintext.count
    }

    private mutating func sealRecord(
        _ plaintext: UnsafeRawBufferPointer, into output: inout [UInt8]
    ) throws(LinkCryptoError) {
        guard cipher.nonce < UInt64.max else { throw LinkCryptoError(.nonceExhausted, "2^64-1 records sealed") }
        let length = UInt16(plaintext.count + Wire.sealTagLength)
        output.append(UInt8(length & 0xff))
        output.append(UInt8(length >> 8))
        try cipher.encrypt(ad: [], plaintext, into: &output)
        if cipher.nonce % rekeyEvery == 0 { try cipher.rekey() }
    }
}

/// Opens the records the peer sealed with its ``RecordSealer``, in order.
public struct RecordOpener {
    private var cipher: CipherState
    private let rekeyEvery: UInt64

    /// The next record's number (its nonce).
    public var counter: UInt64 { cipher.nonce }

    init(key: SymmetricKey, rekeyInterval: UInt64 = RecordSealer.rekeyInterval) {
        cipher = CipherState(key: key)
        rekeyEvery = rekeyInterval
    }

    /// Opens the first record of `bytes`: its plaintext and the bytes it took, or nil while it is incomplete. A
    /// record that fails authentication, or whose length is outside the limits, is an error: the link must close.
    public mutating func open(
        _ bytes: UnsafeRawBufferPointer
    ) throws(LinkCryptoError) -> (
        plaintext: [UInt8], consumed: Int
    )? {
        guard bytes.count >= RecordSealer.headerLength else { return nil }
        let length = Int(bytes[0]) | Int(bytes[1]) << 8
        guard length >= Wire.sealTagLength, length <= Wire.maxRecordPlaintext + Wire.sealTagLength else {
            throw LinkCryptoError(
                .badRecordLength,
                "record length \(length), must be \(Wire.sealTagLength)...\(Wire.maxRecordPlaintext + Wire.sealTagLength)"
            )
        }
        let total = RecordSealer.headerLength + length
        guard bytes.count >= total else { return nil }
        let plaintext = try cipher.decrypt(
            ad: [], UnsafeRawBufferPointer(rebasing: bytes[RecordSealer.headerLength..<total]))
        if cipher.nonce % rekeyEvery == 0 { try cipher.rekey() }
        return (plaintext, total)
    }
}
