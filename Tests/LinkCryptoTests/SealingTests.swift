import LinkCrypto
import Testing
import WireCodec

@Suite("Sealed records and datagrams")
struct SealingTests {
    func keys() throws -> (dialer: LinkKeys, acceptor: LinkKeys) {
        try Pair().keys(dialerSecret: "s", acceptorSecret: "s")
    }

    @Test("large writes split into records of at most 16 KiB; any split of the bytes opens the same")
    func splitting() throws {
        let (d, a) = try keys()
        var sealer = d.makeRecordSealer()
        let plaintext = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var sealed: [UInt8] = []
        try plaintext.withUnsafeBytes { try sealer.seal($0, into: &sealed) }
        #expect(sealer.counter == 3)
        #expect(sealed.count == plaintext.count + 3 * (2 + Wire.sealTagLength))
        var opener = a.makeRecordOpener()
        var pending: [UInt8] = []
        var opened: [UInt8] = []
        for chunk in stride(from: 0, to: sealed.count, by: 1_000) {
            pending += sealed[chunk..<min(sealed.count, chunk + 1_000)]
            while let (bytes, consumed) = try pending.withUnsafeBytes({ try opener.open($0) }) {
                opened += bytes
                pending.removeFirst(consumed)
            }
        }
        #expect(opened == plaintext)
    }

    @Test("a flipped bit, a reordered or replayed record, and a bad length are refused")
    func tampering() throws {
        let (d, a) = try keys()
        var sealer = d.makeRecordSealer()
        var first: [UInt8] = []
        var second: [UInt8] = []
        try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try sealer.seal($0, into: &first) }
        try [UInt8](repeating: 2, count: 10).withUnsafeBytes { try sealer.seal($0, into: &second) }

        var flipped = first
        flipped[5] ^= 0x40
        var opener = a.makeRecordOpener()
        #expect(throws: LinkCryptoError.self) { try flipped.withUnsafeBytes { try opener.open($0) } }

        var reordered = a.makeRecordOpener()
        #expect(throws: LinkCryptoError.self) { try second.withUnsafeBytes { try reordered.open($0) } }

        var replayed = a.makeRecordOpener()
        _ = try first.withUnsafeBytes { try replayed.open($0) }
        #expect(throws: LinkCryptoError.self) { try first.withUnsafeBytes { try replayed.open($0) } }

        var lengths = a.makeRecordOpener()
        let tooLong: [UInt8] = [0xFF, 0xFF]
        #expect(throws: LinkCryptoError.self) { try tooLong.withUnsafeBytes { try lengths.open($0) } }
        let tooShort: [UInt8] = [0x02, 0x00, 0, 0]
        #expect(throws: LinkCryptoError.self) { try tooShort.withUnsafeBytes { try lengths.open($0) } }

        var wrongDirection = d.makeRecordOpener()  // the dialer opening its own records
        #expect(throws: LinkCryptoError.self) { try first.withUnsafeBytes { try wrongDirection.open($0) } }
    }

    @Test("datagrams: out of order within the window, never twice, never too old, never altered")
    func datagrams() throws {
        let (d, a) = try keys()
        var sealer = d.makeDatagramSealer()
        let header: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9]
        let body: [UInt8] = [0x03, 0x27, 0x05]
        var datagrams: [[UInt8]] = []
        for _ in 0..<100 {
            datagrams.append(
                try header.withUnsafeBytes { h in try body.withUnsafeBytes { try sealer.seal(header: h, plaintext: $0) }
                })
        }
        var opener = a.makeDatagramOpener()
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
