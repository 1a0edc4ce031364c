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
