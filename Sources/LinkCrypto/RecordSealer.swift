import Crypto
import Foundation
import WireCodec

/// Seals what one side sends on a stream after `auth`, as records of ChaCha20-Poly1305.
///
/// A record is `u16le length | ciphertext | tag`, where `length` counts the ciphertext and the 16-byte tag, the
/// plaintext is at most `Wire.maxRecordPlaintext` bytes, the nonce is 4 zero bytes and the record's number
/// (`u64le`, from 0, one per record), and the length field is the additional authenticated data. Numbers never
/// repeat: the sealer refuses to go on when they run out.
public struct RecordSealer {
    let key: SymmetricKey
    /// The next record's number.
    public private(set) var counter: UInt64 = 0

    /// Bytes a record header takes.
    public static let headerLength = 2

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
        guard counter < UInt64.max else { throw LinkCryptoError(.nonceExhausted, "2^64 records sealed") }
        let length = UInt16(plaintext.count + Wire.sealTagLength)
        let header = [UInt8(length & 0xff), UInt8(length >> 8)]
        output += header
        try Nonces.seal(plaintext, header: header, key: key, counter: counter, into: &output)
        counter += 1
    }
}

/// Opens the records the peer sealed with its ``RecordSealer``, in order.
public struct RecordOpener {
    let key: SymmetricKey
    /// The next record's number.
    public private(set) var counter: UInt64 = 0

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
        guard counter < UInt64.max else { throw LinkCryptoError(.nonceExhausted, "2^64 records opened") }
        let header = UnsafeRawBufferPointer(rebasing: bytes[0..<2])
        let ciphertext = UnsafeRawBufferPointer(rebasing: bytes[2..<(total - Wire.sealTagLength)])
        let tag = UnsafeRawBufferPointer(rebasing: bytes[(total - Wire.sealTagLength)..<total])
        let plaintext = try Nonces.open(ciphertext, tag: tag, header: header, key: key, counter: counter)
        counter += 1
        return (plaintext, total)
    }
}

/// Nonces and opening, shared by records and datagrams.
enum Nonces {
    static func make(_ counter: UInt64) throws -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[4 + index] = UInt8(truncatingIfNeeded: counter >> (8 * index)) }
        return try ChaChaPoly.Nonce(data: bytes)
    }

    /// Appends the ciphertext and tag of `plaintext` to `output`.
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, header: [UInt8], key: SymmetricKey, counter: UInt64,
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

    static func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer,
        key: SymmetricKey, counter: UInt64
    ) throws(LinkCryptoError) -> [UInt8] {
        do {
            let box = try ChaChaPoly.SealedBox(nonce: try make(counter), ciphertext: ciphertext, tag: tag)
            return Array(try ChaChaPoly.open(box, using: key, authenticating: header))
        } catch {
            throw LinkCryptoError(.badTag, "authentication failed (record or datagram \(counter))")
        }
    }
}
