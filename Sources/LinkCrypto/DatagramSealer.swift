import Crypto
import WireCodec

/// Seals one side's datagrams after `auth`: `header | u64le counter | ciphertext | tag`.
///
/// The header (link token and sequence) stays readable so that the receiver finds the link; it is authenticated
/// with the counter as additional data. The counter starts at 1 and never repeats; the nonce is 4 zero bytes and
/// the counter, in the link's cipher's byte order (little-endian for ChaChaPoly, big-endian for AESGCM).
public struct DatagramSealer {
    let cipher: any AEADCipher
    /// The last counter used.
    public private(set) var counter: UInt64 = 0

    /// Bytes sealing adds to a datagram: the counter and the tag.
    public static let overhead = 8 + Wire.sealTagLength

    init(key: SymmetricKey, cipher kind: NoiseCipher) {
        cipher = kind.makeCipher(key: key)
    }

    /// Bytes of the sealed datagram for `count` bytes of header and frames.
    public static func sealedSize(of count: Int) -> Int { count + overhead }

    /// Seals `header` (already encoded) and `plaintext` (its frames) into the first
    /// ``sealedSize(of:)`` (of both) bytes of `output`.
    public mutating func seal(
        header: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) {
        precondition(output.count >= Self.sealedSize(of: header.count + plaintext.count), "no room for the datagram")
        guard counter < UInt64.max else { throw LinkCryptoError(.nonceExhausted, "2^64 datagrams sealed") }
        counter += 1
        let additionalLength = header.count + 8
        output.copyMemory(from: header)
        for index in 0..<8 { output[header.count + index] = UInt8(truncatingIfNeeded: counter >> (8 * index)) }
        try cipher.seal(
            plaintext, additional: UnsafeRawBufferPointer(rebasing: output[..<additionalLength]), counter: counter,
            into: UnsafeMutableRawBufferPointer(rebasing: output[additionalLength...]))
    }

    /// The sealed datagram for `header` (already encoded) and `plaintext` (its frames).
    public mutating func seal(
        header: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer
    ) throws(LinkCryptoError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Self.sealedSize(of: header.count + plaintext.count))
        let result = output.withUnsafeMutableBytes { raw in
            Result { () throws(LinkCryptoError) in try seal(header: header, plaintext: plaintext, into: raw) }
        }
        try result.get()
        return output
    }
}

/// Opens the peer's sealed datagrams, refusing replays with a window of the last 64 counters (as IPsec and
/// WireGuard do): datagrams may arrive out of order, never twice.
public struct DatagramOpener {
    let cipher: any AEADCipher
    /// The highest counter accepted so far.
    public private(set) var highest: UInt64 = 0
    /// Bit `i` set: counter `highest - i` was accepted.
    private var window: UInt64 = 0

    init(key: SymmetricKey, cipher kind: NoiseCipher) {
        cipher = kind.makeCipher(key: key)
    }

    /// How far behind the highest counter a datagram may arrive.
    public static let windowSize: UInt64 = 64

    /// Opens a datagram whose header takes `headerLength` bytes of `datagram`: its plaintext (the frames) is
    /// written to `output`, which has room for it (`Wire.maxDatagramLength - headerLength` bytes at most); returns
    /// the plaintext's length.
    public mutating func open(
        _ datagram: UnsafeRawBufferPointer, headerLength: Int, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) -> Int {
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
        let ciphertext = UnsafeRawBufferPointer(rebasing: datagram[(headerLength + 8)..<tagStart])
        try cipher.open(
            ciphertext, tag: UnsafeRawBufferPointer(rebasing: datagram[tagStart...]), additional: additional,
            counter: counter, into: output)
        // Only an authentic datagram moves the window.
        if counter > highest {
            let shift = counter - highest
            window = shift >= 64 ? 1 : (window << shift) | 1
            highest = counter
        } else {
            window |= 1 << (highest - counter)
        }
        return ciphertext.count
    }

    /// The plaintext of a datagram whose header takes `headerLength` bytes of `datagram`.
    public mutating func open(
        _ datagram: UnsafeRawBufferPointer, headerLength: Int
    ) throws(LinkCryptoError) -> [UInt8] {
        var plaintext = [UInt8](repeating: 0, count: Wire.maxDatagramLength)
        let result = plaintext.withUnsafeMutableBytes { raw in
            Result { () throws(LinkCryptoError) in try open(datagram, headerLength: headerLength, into: raw) }
        }
        plaintext.removeLast(plaintext.count - (try result.get()))
        return plaintext
    }
}
