import LinkCrypto
import NIOCore
import NIOEmbedded
import TestSupport
import Testing
import WireCodec

@testable import LanSession

/// A link of a session with a secret, on an embedded channel; the test plays the peer with LinkCrypto directly.
@Suite("A sealed link on an EmbeddedChannel")
struct SealedLinkTests {
    let remote = PeerID(77)
    let secretBytes = Array("correct horse battery staple".utf8)

    func acceptedLink() throws -> (EmbeddedCore, EmbeddedChannel) {
        let embedded = try EmbeddedCore { $0.secret = secretBytes }
        return (embedded, try embedded.acceptedLink())
    }

    /// The peer's side: its hello (with its ephemeral key), the keys from the session's hello, and its proof.
    struct Peer {
        let handshake = SecretHandshake(role: .dialer)
        var hello: [UInt8] = []
        var keys: LinkKeys?

        mutating func open(to sessionHello: Hello, secret: [UInt8], id: PeerID) throws {
            hello = try StreamFraming.encode(
                .hello(
                    Hello(
                        peerID: id, incarnation: 5, displayName: "raw", sessionName: "s",
                        extensions: [.authentication(publicKey: handshake.publicKey)])))
            keys = try handshake.keys(
                secret: SessionSecret(secret: secret, sessionName: "s"), localHello: hello,
                remoteHello: try StreamFraming.encode(.hello(sessionHello)), remoteKey: sessionHello.authenticationKey!)
        }
    }

    func sessionHello(_ embedded: EmbeddedCore, _ channel: EmbeddedChannel) throws -> Hello {
        var decoder = StreamDecoder()
        decoder.append(contentsOf: try embedded.outbound(channel))
        guard case .hello(let hello)? = try decoder.next() else { throw SessionError(.io, "no hello") }
        return hello
    }

    @Test("with the secret: clear hellos and proofs, then sealed frames both ways; the peer connects and counts")
    func member() throws {
        let (embedded, channel) = try acceptedLink()
        let hello = try sessionHello(embedded, channel)
        #expect(hello.capabilities.contains(.authentication))
        var peer = Peer()
        try peer.open(to: hello, secret: secretBytes, id: remote)
        let keys = try #require(peer.keys)
        try channel.writeInbound(ByteBuffer(bytes: peer.hello))
        // The session's proof, in clear; it checks out.
        var decoder = StreamDecoder()
        decoder.append(contentsOf: try embedded.outbound(channel))
        guard case .auth(let proof)? = try decoder.next() else {
            Issue.record("no auth after the hello")
            return
        }
        try keys.verify(peerProof: proof)
        #expect(embedded.info(remote) == nil)  // nothing is kept before the proof

        // The peer's proof, then everything sealed: invitation, resume, an increment — in one write.
        var sealer = keys.makeRecordSealer()
        var sealed: [UInt8] = []
        let frames =
            try StreamFraming.encode(.invitation(Invitation()))
            + StreamFraming.encode(.resume(Resume(received: 0, nextSequence: 1)))
            + StreamFraming.encode(.counterIncrement(count: 3))
        try frames.withUnsafeBytes { try sealer.seal($0, into: &sealed) }
        try channel.writeInbound(ByteBuffer(bytes: try StreamFraming.encode(.auth(proof: keys.proof)) + sealed))
        #expect(embedded.info(remote)?.state == .connected)
        #expect(embedded.increments == [3])
        #expect(embedded.info(remote)?.encrypted == true)

        // What the session wrote after its proof is sealed records only: they open with the peer's keys.
        let written = try embedded.outbound(channel)
        #expect(!written.isEmpty)
        var opener = keys.makeRecordOpener()
        var pending = written[...]
        var plaintext: [UInt8] = []
        while let (bytes, consumed) = try Array(pending).withUnsafeBytes({ try opener.open($0) }) {
            plaintext += bytes
            pending = pending.dropFirst(consumed)
        }
        #expect(pending.isEmpty)
        var frameDecoder = StreamDecoder()
        frameDecoder.append(contentsOf: plaintext)
        var kinds: [MessageKind] = []
        while let message = try frameDecoder.next() { kinds.append(message.kind) }
        #expect(kinds.contains(.accept))
        #expect(kinds.contains(.resume))  // the leader's activation travels sealed
    }

    @Test("a wrong secret: the proof fails, the link closes, nothing of the peer is kept")
    func wrongSecret() throws {
        let (embedded, channel) = try acceptedLink()
        var peer = Peer()
        try peer.open(to: try sessionHello(embedded, channel), secret: Array("guess".utf8), id: remote)
        let keys = try #require(peer.keys)
        try channel.writeInbound(ByteBuffer(bytes: peer.hello))
        try channel.writeInbound(ByteBuffer(bytes: try StreamFraming.encode(.auth(proof: keys.proof))))
        #expect(!channel.isActive)
        #expect(embedded.core.peerInfos().isEmpty)
        #expect(embedded.core.securityStatistics().failedHandshakes == 1)
    }

    @Test("no key in the hello: declined as authenticationFailed before anything is kept")
    func noSecret() throws {
        let (embedded, channel) = try acceptedLink()
        _ = try embedded.outbound(channel)
        try channel.writeInbound(
            ByteBuffer(
                bytes: try StreamFraming.encode(
                    .hello(Hello(peerID: remote, incarnation: 5, displayName: "raw", sessionName: "s")))))
        var decoder = StreamDecoder()
        decoder.append(contentsOf: try embedded.outbound(channel))
        #expect(try decoder.next() == .decline(.authenticationFailed))
        #expect(!channel.isActive)
        #expect(embedded.core.peerInfos().isEmpty)
    }

    @Test("commands in clear after the proofs, or a record with a flipped bit, close the link with nothing counted")
    func clearAfterProof() throws {
        for tamper in [false, true] {
            let (embedded, channel) = try acceptedLink()
            var peer = Peer()
            try peer.open(to: try sessionHello(embedded, channel), secret: secretBytes, id: remote)
            let keys = try #require(peer.keys)
            try channel.writeInbound(ByteBuffer(bytes: peer.hello))
            var bytes = try StreamFraming.encode(.auth(proof: keys.proof))
            var sealer = keys.makeRecordSealer()
            var sealed: [UInt8] = []
            let invitation = try StreamFraming.encode(.invitation(Invitation()))
            try invitation.withUnsafeBytes { try sealer.seal($0, into: &sealed) }
            if tamper {
                sealed[sealed.count - 1] ^= 1
                bytes += sealed
            } else {
                // A clear frame after the sealed ones is read as the start of a record, which then fails.
                bytes += sealed + (try StreamFraming.encode(.counterIncrement(count: 9)))
                bytes += [UInt8](repeating: 0, count: Wire.maxRecordPlaintext + Wire.sealTagLength)
            }
            try channel.writeInbound(ByteBuffer(bytes: bytes))
            #expect(!channel.isActive)
            #expect(embedded.recorder.calls.isEmpty)
        }
    }
}
