import Crypto
import Testing
import WireCodec

@testable import LinkCrypto

@Suite("Sealed records and datagrams")
struct SealingTests {
    func keys() throws -> (initiator: LinkKeys, responder: LinkKeys) {
        try Handshakes.keys(psk: try secret("s"))
    }

    @Test("large writes split into records of at most 16 KiB; any split of the bytes opens the same")
    func splitting() throws {
        let (i, r) = try keys()
        var sealer = i.makeRecordSealer()
        let plaintext = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var sealed: [UInt8] = []
        try plaintext.withUnsafeBytes { try sealer.seal($0, into: &sealed) }
        #expect(sealer.counter == 3)
        #expect(sealed.count == plaintext.count + 3 * (RecordSealer.headerLength + Wire.sealTagLength))
        #expect(!sealed.contains(subsequence: Array(plaintext[100..<132])))
        for chunkSize in [1, 7, 1_000, 16_402, 16_403, sealed.count] {
            var opener = r.makeRecordOpener()
            var pending: [UInt8] = []
            var opened: [UInt8] = []
            for chunk in stride(from: 0, to: sealed.count, by: chunkSize) {
                pending += sealed[chunk..<min(sealed.count, chunk + chunkSize)]
                while let (bytes, consumed) = try pending.withUnsafeBytes({ try opener.open($0) }) {
                    opened += bytes
                    pending.removeFirst(consumed)
                }
            }
            #expect(opened == plaintext, "chunks of \(chunkSize)")
            #expect(pending.isEmpty && opener.counter == 3)
        }
    }

    @Test("two parts seal to the same records as their bytes back to back, wherever the parts meet")
    func twoParts() throws {
        let (i, _) = try keys()
        let plaintext = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var whole = i.makeRecordSealer()
        var expected: [UInt8] = []
        try plaintext.withUnsafeBytes { try whole.seal($0, into: &expected) }
        for cut in [0, 1, 6, Wire.maxRecordPlaintext - 1, Wire.maxRecordPlaintext, Wire.maxRecordPlaintext + 6, 40_000]
        {
            var sealer = i.makeRecordSealer()
            var sealed = [UInt8](repeating: 0, count: RecordSealer.sealedSize(of: plaintext.count))
            try plaintext[..<cut].withUnsafeBytes { first in
                try plaintext[cut...].withUnsafeBytes { rest in
                    try sealed.withUnsafeMutableBytes { try sealer.seal(first, rest, into: $0) }
                }
            }
            #expect(sealed == expected, "parts of \(cut) and \(plaintext.count - cut) bytes")
        }
    }

    @Test("an empty write is one record of a tag")
    func empty() throws {
        let (i, r) = try keys()
        var sealer = i.makeRecordSealer()
        var sealed: [UInt8] = []
        try [UInt8]().withUnsafeBytes { try sealer.seal($0, into: &sealed) }
        #expect(sealed.count == RecordSealer.headerLength + Wire.sealTagLength)
        var opener = r.makeRecordOpener()
        let opened = try sealed.withUnsafeBytes { try opener.open($0) }
        #expect(opened?.plaintext == [] && opened?.consumed == sealed.count)
    }

    @Test("a flipped bit, a reordered or replayed record, and a bad length are refused")
    func tampering() throws {
        let (i, r) = try keys()
        var sealer = i.makeRecordSealer()
        var first: [UInt8] = []
        var second: [UInt8] = []
        try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try sealer.seal($0, into: &first) }
        try [UInt8](repeating: 2, count: 10).withUnsafeBytes { try sealer.seal($0, into: &second) }

        for position in 2..<first.count {
            var flipped = first
            flipped[position] ^= 0x40
            var opener = r.makeRecordOpener()
            let error = #expect(throws: LinkCryptoError.self) { try flipped.withUnsafeBytes { try opener.open($0) } }
            #expect(error?.code == .badTag)
            #expect(opener.counter == 0)
        }

        var reordered = r.makeRecordOpener()
        #expect(throws: LinkCryptoError.self) { try second.withUnsafeBytes { try reordered.open($0) } }

        var replayed = r.makeRecordOpener()
        _ = try first.withUnsafeBytes { try replayed.open($0) }
        #expect(throws: LinkCryptoError.self) { try first.withUnsafeBytes { try replayed.open($0) } }

        var lengths = r.makeRecordOpener()
        let tooLong: [UInt8] = [0x11, 0x40]  // 16401
        let error = #expect(throws: LinkCryptoError.self) { try tooLong.withUnsafeBytes { try lengths.open($0) } }
        #expect(error?.code == .badRecordLength)
        let tooShort: [UInt8] = [0x0F, 0x00, 0, 0]
        #expect(throws: LinkCryptoError.self) { try tooShort.withUnsafeBytes { try lengths.open($0) } }
        let longest: [UInt8] = [0x10, 0x40]  // 16400: waits for the rest
        #expect(try longest.withUnsafeBytes { try lengths.open($0) } == nil)

        var wrongDirection = i.makeRecordOpener()  // the initiator opening its own records
        #expect(throws: LinkCryptoError.self) { try first.withUnsafeBytes { try wrongDirection.open($0) } }
    }

    /// ChaCha20-Poly1305 with Noise's nonce, computed here with swift-crypto alone.
    static func encrypt(_ plaintext: [UInt8], key: SymmetricKey, nonce: UInt64) throws -> [UInt8] {
        let nonceBytes = [0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: nonce >> (8 * $0)) }
        let box = try ChaChaPoly.seal(plaintext, using: key, nonce: try ChaChaPoly.Nonce(data: nonceBytes))
        return Array(box.ciphertext) + Array(box.tag)
    }

    @Test("every 3 records (injected interval) both sides rekey as Noise's Rekey(); nonces go on")
    func rekey() throws {
        let (i, r) = try keys()
        var sealer = i.makeRecordSealer(rekeyInterval: 3)
        var opener = r.makeRecordOpener(rekeyInterval: 3)
        var key = i.sendStream
        for number in 0..<10 {
            if number > 0 && number % 3 == 0 {
                key = SymmetricKey(
                    data: try Self.encrypt([UInt8](repeating: 0, count: 32), key: key, nonce: .max)[..<32])
            }
            let plaintext = Array("record \(number)".utf8)
            var sealed: [UInt8] = []
            try plaintext.withUnsafeBytes { try sealer.seal($0, into: &sealed) }
            let expected = try Self.encrypt(plaintext, key: key, nonce: UInt64(number))
            #expect(sealed == [UInt8(expected.count), 0] + expected, "record \(number)")
            let opened = try sealed.withUnsafeBytes { try opener.open($0) }
            #expect(opened?.plaintext == plaintext)
        }
        #expect(sealer.counter == 10 && opener.counter == 10)

        // An opener that does not rekey fails at record 3.
        var sealer2 = i.makeRecordSealer(rekeyInterval: 3)
        var stale = r.makeRecordOpener()
        for number in 0..<4 {
            var sealed: [UInt8] = []
            try [UInt8(number)].withUnsafeBytes { try sealer2.seal($0, into: &sealed) }
            if number < 3 {
                _ = try sealed.withUnsafeBytes { try stale.open($0) }
            } else {
                #expect(throws: LinkCryptoError.self) { try sealed.withUnsafeBytes { try stale.open($0) } }
            }
        }
        #expect(RecordSealer.rekeyInterval == 1 << 20)
    }

    @Test("datagrams: out of order within the window, never twice, never too old, never altered")
    func datagrams() throws {
        let (i, r) = try keys()
        var sealer = i.makeDatagramSealer()
        let header: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9]
        let body: [UInt8] = [0x03, 0x27, 0x05]
        var datagrams: [[UInt8]] = []
        for _ in 0..<100 {
            datagrams.append(
                try header.withUnsafeBytes { h in try body.withUnsafeBytes { try sealer.seal(header: h, plaintext: $0) }
                })
        }
        var opener = r.makeDatagramOpener()
        func open(_ index: Int) throws -> [UInt8] {
            try datagrams[index].withUnsafeBytes { try opener.open($0, headerLength: header.count) }
        }
        #expect(try open(10) == body)
        #expect(try open(5) == body)  // late, within the window
        #expect(throws: LinkCryptoError.self) { try open(5) }  // twice
        #expect(try open(99) == body)
        #expect(throws: LinkCryptoError.self) { try open(20) }  // 79 behind: too old
        #expect(try open(98) == body)
        var altered = datagrams[97]
        altered[2] ^= 1  // the header is authenticated too
        #expect(throws: LinkCryptoError.self) {
            try altered.withUnsafeBytes { try opener.open($0, headerLength: header.count) }
        }
        #expect(try open(97) == body)  // an altered copy did not use up the real one

        var wrongDirection = i.makeDatagramOpener()
        #expect(throws: LinkCryptoError.self) {
            try datagrams[0].withUnsafeBytes { try wrongDirection.open($0, headerLength: header.count) }
        }
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains {
            self[$0..<($0 + subsequence.count)].elementsEqual(subsequence)
        }
    }
}
