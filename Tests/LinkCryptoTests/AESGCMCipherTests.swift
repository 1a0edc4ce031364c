import Crypto
import Testing
import WireCodec

@testable import LinkCrypto

/// The records' AES-256-GCM (libcrypto) against swift-crypto's `AES.GCM` (BoringSSL's), an independent
/// implementation, with Noise's AESGCM nonce (4 zero bytes and the counter big-endian); in place, tampered, and
/// against a vector computed once with Python's `cryptography`.
@Suite("AES-256-GCM on libcrypto")
struct AESGCMCipherTests {
    /// Noise's AESGCM nonce, built here without the cipher's own code.
    static func nonceBytes(_ counter: UInt64) -> [UInt8] {
        [0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: counter >> (8 * (7 - $0))) }
    }

    static func seal(
        _ cipher: any AEADCipher, _ plaintext: [UInt8], additional: [UInt8] = [], counter: UInt64
    ) throws -> [UInt8] {
        var sealed = [UInt8](repeating: 0, count: AESGCMCipher.sealedSize(of: plaintext.count))
        try plaintext.withUnsafeBytes { plain in
            try additional.withUnsafeBytes { ad in
                try sealed.withUnsafeMutableBytes { out in
                    try cipher.seal(plain, additional: ad, counter: counter, into: out)
                }
            }
        }
        return sealed
    }

    static func open(
        _ cipher: any AEADCipher, _ sealed: [UInt8], additional: [UInt8] = [], counter: UInt64
    ) throws(LinkCryptoError) -> [UInt8] {
        let size = sealed.count - Wire.sealTagLength
        var opened = [UInt8](repeating: 0, count: size)
        let result = sealed.withUnsafeBytes { raw in
            additional.withUnsafeBytes { ad in
                opened.withUnsafeMutableBytes { out in
                    Result { () throws(LinkCryptoError) in
                        try cipher.open(
                            UnsafeRawBufferPointer(rebasing: raw[..<size]),
                            tag: UnsafeRawBufferPointer(rebasing: raw[size...]), additional: ad, counter: counter,
                            into: out)
                    }
                }
            }
        }
        try result.get()
        return opened
    }

    @Test(
        "sizes 0 to 70,000, with and without additional data, counters up to 2^64-1: the same bytes as swift-crypto",
        arguments: [0, 1, 15, 16, 17, 63, 64, 1000, 16 * 1024, 70_000])
    func sameAsSwiftCrypto(size: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let key = SymmetricKey(size: .bits256)
        let cipher = AESGCMCipher(key: key)
        let plaintext = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for (counter, additional) in [
            (UInt64(0), [UInt8]()), (1 << 32 | 7, [1, 2, 3]), (0x0102_0304_0506_0708, [7]),
            (UInt64.max, [UInt8](repeating: 9, count: 40)),
        ] {
            let sealed = try Self.seal(cipher, plaintext, additional: additional, counter: counter)
            let reference = try AES.GCM.seal(
                plaintext, using: key, nonce: AES.GCM.Nonce(data: Self.nonceBytes(counter)), authenticating: additional)
            #expect(sealed == Array(reference.ciphertext) + Array(reference.tag), "counter \(counter)")
            #expect(try Self.open(cipher, sealed, additional: additional, counter: counter) == plaintext)

            // A flipped bit anywhere, another counter or other additional data: refused, with badTag.
            var flipped = sealed
            flipped[Int.random(in: 0..<flipped.count)] ^= 0x10
            let error = #expect(throws: LinkCryptoError.self) {
                try Self.open(cipher, flipped, additional: additional, counter: counter)
            }
            #expect(error?.code == .badTag)
            #expect(throws: LinkCryptoError.self) {
                try Self.open(cipher, sealed, additional: additional, counter: counter &+ 1)
            }
            #expect(throws: LinkCryptoError.self) {
                try Self.open(cipher, sealed, additional: additional + [0], counter: counter)
            }
            // After a refusal the context opens the next message as before.
            #expect(try Self.open(cipher, sealed, additional: additional, counter: counter) == plaintext)
        }
    }

    @Test("the nonce's counter is big-endian: a vector from Python's cryptography, and not ChaChaPoly's order")
    func bigEndianNonce() throws {
        // AESGCM(bytes(range(32))).encrypt(b"\0" * 4 + (0x0102030405060708).to_bytes(8, "big"),
        //     b"LanSession AESGCM", b"ad")
        let key = SymmetricKey(data: Array(0..<32) as [UInt8])
        let expected = bytes("48300b5db8927af76cf1ddae5b347eb337fdf92c1976894851a8f4106832fe26fa")
        let littleEndian = bytes("50999116075cbb27fa1dde72db7d7de9f0c676b520a71c276960db6b8346629a36")
        let sealed = try Self.seal(
            AESGCMCipher(key: key), Array("LanSession AESGCM".utf8), additional: Array("ad".utf8),
            counter: 0x0102_0304_0506_0708)
        #expect(sealed == expected)
        #expect(sealed != littleEndian)
        var nonce = AESGCMCipher.nonce(0x0102_0304_0506_0708)
        #expect(withUnsafeBytes(of: &nonce) { Array($0) } == [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
        var chachaNonce = ChaChaPolyCipher.nonce(0x0102_0304_0506_0708)
        #expect(withUnsafeBytes(of: &chachaNonce) { Array($0) } == [0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1])
    }

    @Test("sealed and opened in place, in one buffer", arguments: [NoiseCipher.aesGCM, .chaChaPoly])
    func inPlace(kind: NoiseCipher) throws {
        let key = SymmetricKey(size: .bits256)
        let cipher = kind.makeCipher(key: key)
        let plaintext = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let expected = try Self.seal(kind.makeCipher(key: key), plaintext, counter: 42)
        var buffer = plaintext + [UInt8](repeating: 0, count: Wire.sealTagLength)
        try buffer.withUnsafeMutableBytes { raw in
            try cipher.seal(
                UnsafeRawBufferPointer(rebasing: raw[..<plaintext.count]),
                additional: UnsafeRawBufferPointer(start: nil, count: 0), counter: 42, into: raw)
        }
        #expect(buffer == expected)
        let opener = kind.makeCipher(key: key)
        try buffer.withUnsafeMutableBytes { raw in
            try opener.open(
                UnsafeRawBufferPointer(rebasing: raw[..<plaintext.count]),
                tag: UnsafeRawBufferPointer(rebasing: raw[plaintext.count...]),
                additional: UnsafeRawBufferPointer(start: nil, count: 0), counter: 42,
                into: UnsafeMutableRawBufferPointer(rebasing: raw[..<plaintext.count]))
        }
        #expect(Array(buffer[..<plaintext.count]) == plaintext)
    }

    @Test("an AESGCM link's records are Noise's AESGCM transport messages, rekeys included; its datagrams open")
    func link() throws {
        let (i, r) = try Handshakes.keys(psk: try secret("s"), cipher: .aesGCM)
        #expect(i.cipher == .aesGCM && r.cipher == .aesGCM)
        var sealer = i.makeRecordSealer(rekeyInterval: 3)
        var opener = r.makeRecordOpener(rekeyInterval: 3)
        var key = i.sendStream
        for number in 0..<7 {
            if number > 0 && number % 3 == 0 {
                let zeros = [UInt8](repeating: 0, count: 32)
                let box = try AES.GCM.seal(zeros, using: key, nonce: AES.GCM.Nonce(data: Self.nonceBytes(.max)))
                key = SymmetricKey(data: Array(box.ciphertext))
            }
            let plaintext = Array("record \(number)".utf8)
            var sealed: [UInt8] = []
            try plaintext.withUnsafeBytes { try sealer.seal($0, into: &sealed) }
            let box = try AES.GCM.seal(
                plaintext, using: key, nonce: AES.GCM.Nonce(data: Self.nonceBytes(UInt64(number))))
            let expected = Array(box.ciphertext) + Array(box.tag)
            #expect(sealed == [UInt8(expected.count), 0] + expected, "record \(number)")
            #expect(try sealed.withUnsafeBytes { try opener.open($0) }?.plaintext == plaintext)
        }

        var datagrams = i.makeDatagramSealer()
        var datagramOpener = r.makeDatagramOpener()
        let header: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9]
        let body: [UInt8] = [0x03, 0x27, 0x05]
        for _ in 0..<3 {
            let sealed = try header.withUnsafeBytes { h in
                try body.withUnsafeBytes { try datagrams.seal(header: h, plaintext: $0) }
            }
            #expect(try sealed.withUnsafeBytes { try datagramOpener.open($0, headerLength: header.count) } == body)
            // Counter 1, 2, 3 as u64le on the wire, the nonce big-endian: swift-crypto opens it so.
            let counter = sealed[header.count..<(header.count + 8)].reversed().reduce(UInt64(0)) {
                $0 << 8 | UInt64($1)
            }
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: Self.nonceBytes(counter)),
                ciphertext: sealed[(header.count + 8)..<(sealed.count - 16)], tag: sealed[(sealed.count - 16)...])
            let opened = try AES.GCM.open(box, using: i.sendDatagrams, authenticating: sealed[..<(header.count + 8)])
            #expect(Array(opened) == body)
        }
    }

    @Test("a ChaChaPoly side and an AESGCM side do not complete a handshake", arguments: [false, true])
    func mismatch(psk: Bool) throws {
        let secret = psk ? try secret("s") : nil
        var pair = Handshakes(
            initiatorPSK: secret, responderPSK: secret, initiatorCipher: .chaChaPoly, responderCipher: .aesGCM)
        #expect(throws: LinkCryptoError.self) { try pair.run() }
        #expect(!pair.initiator.isComplete || !pair.responder.isComplete)
    }
}
