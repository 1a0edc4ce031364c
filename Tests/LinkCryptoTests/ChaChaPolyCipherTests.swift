import Crypto
import Testing

@testable import LinkCrypto

/// The records' cipher (libcrypto) against swift-crypto's `ChaChaPoly` (BoringSSL's), an independent implementation:
/// the same key, nonce and additional data give the same bytes, and each opens what the other sealed.
@Suite("ChaCha20-Poly1305 on libcrypto")
struct ChaChaPolyCipherTests {
    static func nonce(_ counter: UInt64) throws -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[4 + index] = UInt8(truncatingIfNeeded: counter >> (8 * index)) }
        return try ChaChaPoly.Nonce(data: bytes)
    }

    @Test(
        "sizes 0 to 70,000, with and without additional data, counters up to 2^64-1: the same bytes as swift-crypto",
        arguments: [0, 1, 15, 16, 63, 64, 65, 1000, 16 * 1024, 70_000])
    func sameAsSwiftCrypto(size: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let key = SymmetricKey(size: .bits256)
        let cipher = ChaChaPolyCipher(key: key)
        let plaintext = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for (counter, additional) in [
            (UInt64(0), [UInt8]()), (1 << 32 | 7, [1, 2, 3]), (UInt64.max, [UInt8](repeating: 9, count: 40)),
        ] {
            var sealed = [UInt8](repeating: 0, count: ChaChaPolyCipher.sealedSize(of: size))
            try plaintext.withUnsafeBytes { plain in
                try additional.withUnsafeBytes { ad in
                    try sealed.withUnsafeMutableBytes { out in
                        try cipher.seal(plain, additional: ad, counter: counter, into: out)
                    }
                }
            }
            let reference = try ChaChaPoly.seal(
                plaintext, using: key, nonce: Self.nonce(counter), authenticating: additional)
            #expect(sealed == Array(reference.ciphertext) + Array(reference.tag))

            // libcrypto opens it; a flipped bit anywhere, another counter or other additional data do not.
            var opened = [UInt8](repeating: 0, count: size)
            let open = { (bytes: [UInt8], counter: UInt64, additional: [UInt8]) throws(LinkCryptoError) in
                let result = bytes.withUnsafeBytes { raw in
                    additional.withUnsafeBytes { ad in
                        opened.withUnsafeMutableBytes { out in
                            Result { () throws(LinkCryptoError) in
                                try cipher.open(
                                    UnsafeRawBufferPointer(rebasing: raw[..<size]),
                                    tag: UnsafeRawBufferPointer(rebasing: raw[size...]), additional: ad,
                                    counter: counter, into: out)
                            }
                        }
                    }
                }
                try result.get()
            }
            try open(sealed, counter, additional)
            #expect(opened == plaintext)
            var flipped = sealed
            flipped[Int.random(in: 0..<flipped.count)] ^= 0x10
            #expect(throws: LinkCryptoError.self) { try open(flipped, counter, additional) }
            #expect(throws: LinkCryptoError.self) { try open(sealed, counter &+ 1, additional) }
            #expect(throws: LinkCryptoError.self) { try open(sealed, counter, additional + [0]) }
            // After a refusal the context opens the next message as before.
            try open(sealed, counter, additional)
            #expect(opened == plaintext)
        }
    }
}
