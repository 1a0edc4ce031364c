import Crypto
import Foundation
import WireCodec

/// Opens the records the peer sealed with its ``RecordSealer``, in order.
public struct RecordOpener {
    private var cipher: CipherState
    private let rekeyEvery: UInt64

    /// The next record's number (its nonce).
    public var counter: UInt64 { cipher.nonce }

    init(key: SymmetricKey, cipher kind: NoiseCipher, rekeyInterval: UInt64 = RecordSealer.rekeyInterval) {
        cipher = CipherState(key: key, cipher: kind)
        rekeyEvery = rekeyInterval
    }

    /// The length of the first record of `bytes` (its header, ciphertext and tag), or nil while its header is
    /// incomplete. A length outside the limits is an error: the link must close.
    public static func recordLength(in bytes: UnsafeRawBufferPointer) throws(LinkCryptoError) -> Int? {
        guard bytes.count >= RecordSealer.headerLength else { return nil }
        let length = Int(bytes[0]) | Int(bytes[1]) << 8
        guard length >= Wire.sealTagLength, length <= Wire.maxRecordPlaintext + Wire.sealTagLength else {
            throw LinkCryptoError(
                .badRecordLength,
                "record length \(length), must be \(Wire.sealTagLength)...\(Wire.maxRecordPlaintext + Wire.sealTagLength)"
            )
        }
        return RecordSealer.headerLength + length
    }

    /// Opens the first record of `bytes`, writing its plaintext (at most `Wire.maxRecordPlaintext` bytes) to
    /// `output`: the plaintext's length and the bytes the record took, or nil while it is incomplete. A record that
    /// fails authentication, or whose length is outside the limits, is an error: the link must close.
    public mutating func open(
        _ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) -> (written: Int, consumed: Int)? {
        guard let total = try Self.recordLength(in: bytes), bytes.count >= total else { return nil }
        let written = try cipher.decrypt(
            ad: UnsafeRawBufferPointer(start: nil, count: 0),
            UnsafeRawBufferPointer(rebasing: bytes[RecordSealer.headerLength..<total]), into: output)
        if cipher.nonce % rekeyEvery == 0 { try cipher.rekey() }
        return (written, total)
    }

    /// Opens the first record of `bytes`: its plaintext and the bytes it took, or nil while it is incomplete.
    public mutating func open(
        _ bytes: UnsafeRawBufferPointer
    ) throws(LinkCryptoError) -> (
        plaintext: [UInt8], consumed: Int
    )? {
        var plaintext = [UInt8](repeating: 0, count: Wire.maxRecordPlaintext)
        let result = plaintext.withUnsafeMutableBytes { raw in
            Result { () throws(LinkCryptoError) in try open(bytes, into: raw) }
        }
        guard let (written, consumed) = try result.get() else { return nil }
        plaintext.removeLast(plaintext.count - written)
        return (plaintext, consumed)
    }
}
