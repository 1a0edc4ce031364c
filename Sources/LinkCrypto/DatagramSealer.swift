import Crypto
import WireCodec

/// Seals one side's datagrams after `auth`: `header | u64le counter | ciphertext | tag`.
///
/// The header (link token and sequence) stays readable so that the receiver finds the link; it is authenticated
/// with the counter as additional data. The counter starts at 1 and never repeats; the nonce is 4 zero bytes and
/// the counter.
public struct DatagramSealer {
    let key: SymmetricKey
    /// The last counter used.
    public private(set) var counter: UInt64 = 0

    /// Bytes sealing adds to a datagram: the counter and the tag.
    public static let overhead = 8 + Wire.sealTagLength

    /// The sealed datagram for `header` (already encoded) and `plaintext` (its frames).
    public mutating func seal(
        header: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer
    ) throws(LinkCryptoError)
        -> [UInt8]
    {
        guard counter < UInt64.max else { throw LinkCryptoError(.nonceExhausted, "2^64 datagrams sealed") }
        counter += 1
        var output = [UInt8](header)
        for index in 0..<8 { output.append(UInt8(truncatingIfNeeded: counter >> (8 * index))) }
        let additional = output
        try Nonces.seal(plaintext, header: additional, key: key, counter: counter, into: &output)
        return output
    }
}

/// Opens the peer's sealed datagrams, refusing replays with a window of the last 64 counters (as IPsec and
/// WireGuard do): datagrams may arrive out of order, never twice.
public struct DatagramOpener {
    let key: SymmetricKey
    /// The highest counter accepted so far.
    public private(set) var highest: UInt64 = 0
    /// Bit `i` set: counter `highest - i` was accepted.
    private var window: UInt64 = 0

    init(key: SymmetricKey) {
        self.key = key
    }

    /// How far behind the highest counter a datagram may arrive.
    public static let windowSize: UInt64 = 64

    /// The plaintext of a datagram whose header takes `headerLength` bytes of `datagram`.
    public mutating func open(_ datagram: UnsafeRawBufferPointer, headerLength: Int) throws(LinkCryptoError) -> [UInt8]
    {
        guard datagram.count >= headerLength + DatagramSealer.overhead,
            datagram.count <= Wire.maxDatagramLength + DatagramSealer.overhead
        else {
            throw LinkCryptoError(.badDatagramLength, "sealed datagram of \(datagram.count) bytes")
        }
        var counter: UInt64 = 0
        for index in 0..<8 { counter |= UInt64(datagram[headerLength + index]) << (8 * index) }
        guard counter > 0 else { throw LinkCryptoError(.replayedDatagram, "datagram counter 0") }
        if counter <= highest {
            let age = highest - counter
            guard age < Self.windowSize, window & (1 << age) == 0 else {
                throw LinkCryptoError(.replayedDatagram, "datagram \(counter) seen before or too old")
            }
        }
        let additional = UnsafeRawBufferPointer(rebasing: datagram[0..<(headerLength + 8)])
        let tagStart = datagram.count - Wire.sealTagLength
        let plaintext = try Nonces.open(
            UnsafeRawBufferPointer(rebasing: datagram[(headerLength + 8)..<tagStart]),
            tag: UnsafeRawBufferPointer(rebasing: datagram[tagStart...]), header: additional, key: key,
            counter: counter)
        // Only an authentic datagram moves the window.
        if counter > highest {
            let shift = counter - highest
            window = shift >= 64 ? 1 : (window << shift) | 1
            highest = counter
        } else {
            window |= 1 << (highest - counter)
        }
        return plaintext
    }
}
