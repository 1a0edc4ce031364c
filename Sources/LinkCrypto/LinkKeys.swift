import Crypto

/// The keys of one link, from a complete ``NoiseHandshake`` (``NoiseHandshake/split()``).
///
/// The stream's keys are Noise's `Split()` of the final chaining key: the initiator sends with the first, the
/// responder with the second. The datagrams' keys are the same `HKDF` of that chaining key with
/// `"LanSession v3 datagrams"` as input key material: the first for the initiator's datagrams, the second for the
/// responder's.
public struct LinkKeys: Sendable {
    /// The cipher of the handshake, which seals the link's records and datagrams.
    public let cipher: NoiseCipher
    /// The handshake hash `h` (32 bytes), the same on both sides.
    public let handshakeHash: [UInt8]
    let sendStream: SymmetricKey
    let receiveStream: SymmetricKey
    let sendDatagrams: SymmetricKey
    let receiveDatagrams: SymmetricKey

    /// A short code both users can compare: 6 decimal digits, zero-padded, from the handshake hash — the big-endian
    /// `u32` of the first 4 bytes of `SHA-256("LanSession v3 pairing code" || h)`, modulo 1 000 000.
    public var pairingCode: String {
        var hasher = SHA256()
        hasher.update(data: Array(Labels.pairingCode.utf8))
        hasher.update(data: handshakeHash)
        let digest = Array(hasher.finalize())
        let value = digest[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } % 1_000_000
        let digits = String(value)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// Seals what this side sends on the stream.
    public func makeRecordSealer() -> RecordSealer { makeRecordSealer(rekeyInterval: RecordSealer.rekeyInterval) }
    /// Opens what the peer sends on the stream.
    public func makeRecordOpener() -> RecordOpener { makeRecordOpener(rekeyInterval: RecordSealer.rekeyInterval) }
    /// Seals this side's datagrams.
    public func makeDatagramSealer() -> DatagramSealer { DatagramSealer(key: sendDatagrams, cipher: cipher) }
    /// Opens the peer's datagrams.
    public func makeDatagramOpener() -> DatagramOpener { DatagramOpener(key: receiveDatagrams, cipher: cipher) }

    /// A sealer that rekeys after every `rekeyInterval` records (tests).
    func makeRecordSealer(rekeyInterval: UInt64) -> RecordSealer {
        RecordSealer(key: sendStream, cipher: cipher, rekeyInterval: rekeyInterval)
    }

    /// An opener that rekeys after every `rekeyInterval` records (tests).
    func makeRecordOpener(rekeyInterval: UInt64) -> RecordOpener {
        RecordOpener(key: receiveStream, cipher: cipher, rekeyInterval: rekeyInterval)
    }
}
