import LinkCrypto
import Testing
import WireCodec

/// Both sides of a handshake, as the session runs them.
struct Pair {
    let dialer = SecretHandshake(role: .dialer)
    let acceptor = SecretHandshake(role: .acceptor)
    var dialerHello: [UInt8] { hello(1, dialer.publicKey) }
    var acceptorHello: [UInt8] { hello(2, acceptor.publicKey) }

    func hello(_ id: UInt64, _ key: [UInt8], session: String = "bubbles") -> [UInt8] {
        try! StreamFraming.encode(
            .hello(
                Hello(
                    peerID: PeerID(id), incarnation: 7, displayName: "p\(id)", sessionName: session,
                    extensions: [.authentication(publicKey: key)])))
    }

    func keys(dialerSecret: String, acceptorSecret: String) throws -> (dialer: LinkKeys, acceptor: LinkKeys) {
        let d = try dialer.keys(
            secret: SessionSecret(secret: Array(dialerSecret.utf8), sessionName: "bubbles"), localHello: dialerHello,
            remoteHello: acceptorHello, remoteKey: acceptor.publicKey)
        let a = try acceptor.keys(
            secret: SessionSecret(secret: Array(acceptorSecret.utf8), sessionName: "bubbles"),
            localHello: acceptorHello, remoteHello: dialerHello, remoteKey: dialer.publicKey)
        return (d, a)
    }
}

@Suite("The secret handshake")
struct SecretHandshakeTests {
    @Test("the same secret: both proofs verify, and each side opens what the other seals")
    func sameSecret() throws {
        let (d, a) = try Pair().keys(dialerSecret: "s3cret", acceptorSecret: "s3cret")
        try a.verify(peerProof: d.proof)
        try d.verify(peerProof: a.proof)
        #expect(d.proof != a.proof)  // a reflected proof is no proof

        var sealer = d.makeRecordSealer()
        var sealed: [UInt8] = []
        let message: [UInt8] = Array("hello over the stream".utf8)
        try message.withUnsafeBytes { try sealer.seal($0, into: &sealed) }
        #expect(!sealed.contains(subsequence: message))
        var opener = a.makeRecordOpener()
        let opened = try sealed.withUnsafeBytes { try opener.open($0) }
        #expect(opened?.plaintext == message)
        #expect(opened?.consumed == sealed.count)
    }

    @Test("a wrong secret: neither proof verifies")
    func wrongSecret() throws {
        let (d, a) = try Pair().keys(dialerSecret: "s3cret", acceptorSecret: "guess")
        #expect(throws: LinkCryptoError.self) { try a.verify(peerProof: d.proof) }
        #expect(throws: LinkCryptoError.self) { try d.verify(peerProof: a.proof) }
    }

    @Test("another session with the same secret: different keys")
    func sessionBound() throws {
        let pair = Pair()
        let d = try pair.dialer.keys(
            secret: SessionSecret(secret: Array("s3cret".utf8), sessionName: "bubbles"),
            localHello: pair.dialerHello, remoteHello: pair.acceptorHello, remoteKey: pair.acceptor.publicKey)
        let a = try pair.acceptor.keys(
            secret: SessionSecret(secret: Array("s3cret".utf8), sessionName: "counter"),
            localHello: pair.acceptorHello, remoteHello: pair.dialerHello, remoteKey: pair.dialer.publicKey)
        #expect(throws: LinkCryptoError.self) { try a.verify(peerProof: d.proof) }
    }

    @Test("a replayed handshake meets a fresh key and fails")
    func replay() throws {
        // Recorded: a dialer's hello and proof from an earlier handshake with a member.
        let recorded = Pair()
        let (old, _) = try recorded.keys(dialerSecret: "s3cret", acceptorSecret: "s3cret")
        // Replayed to the member, which answers with a fresh ephemeral key.
        let fresh = SecretHandshake(role: .acceptor)
        let freshHello = recorded.hello(2, fresh.publicKey)
        let keys = try fresh.keys(
            secret: SessionSecret(secret: Array("s3cret".utf8), sessionName: "bubbles"), localHello: freshHello,
            remoteHello: recorded.dialerHello, remoteKey: recorded.dialer.publicKey)
        #expect(throws: LinkCryptoError.self) { try keys.verify(peerProof: old.proof) }
    }

    @Test("a changed hello (another peer id) changes the keys")
    func transcriptBound() throws {
        let pair = Pair()
        let secret = try SessionSecret(secret: Array("s3cret".utf8), sessionName: "bubbles")
        let d = try pair.dialer.keys(
            secret: secret, localHello: pair.dialerHello, remoteHello: pair.acceptorHello,
            remoteKey: pair.acceptor.publicKey)
        let forgedHello = pair.hello(9, pair.dialer.publicKey)  // the dialer's key under another id
        let a = try pair.acceptor.keys(
            secret: secret, localHello: pair.acceptorHello, remoteHello: forgedHello, remoteKey: pair.dialer.publicKey)
        #expect(throws: LinkCryptoError.self) { try a.verify(peerProof: d.proof) }
    }

    @Test("an empty secret and a malformed key are refused")
    func refusals() throws {
        #expect(throws: LinkCryptoError.self) { try SessionSecret(secret: [], sessionName: "s") }
        let pair = Pair()
        #expect(throws: LinkCryptoError.self) {
            try pair.acceptor.keys(
                secret: SessionSecret(secret: [1], sessionName: "bubbles"), localHello: pair.acceptorHello,
                remoteHello: pair.dialerHello, remoteKey: [1, 2, 3])
        }
    }
}

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
