import Crypto
import LinkCrypto
import NIOCore
import NIOEmbedded
import TestSupport
import Testing
import WireCodec

@_spi(Diagnostics) @testable import LanSession

/// An encrypted link of a session, on an embedded channel; the test plays the dialing peer with LinkCrypto's Noise
/// handshake directly.
@Suite("A sealed link on an EmbeddedChannel")
struct SealedLinkTests {
    let secretBytes = Array("correct horse battery staple".utf8)

    func acceptedLink(
        admission: AdmissionMode? = nil
    ) throws -> (EmbeddedCore, EmbeddedChannel) {
        let secret = secretBytes
        let embedded = try EmbeddedCore {
            $0.isInsecure = false
            $0.peerID = $0.identity.peerID
            $0.admission = admission ?? .secret(secret)
        }
        return (embedded, try embedded.acceptedLink())
    }

    /// The dialing peer's side of the handshake.
    struct Peer {
        let identity = DeviceIdentity.generate()
        var claimed: PeerID?
        var hello: [UInt8] = []
        var handshake: NoiseHandshake?
        var keys: LinkKeys?
        var sealer: RecordSealer?
        var opener: RecordOpener?

        /// Its hello and message 1, for the session's hello.
        mutating func open(to sessionHello: Hello, secret: [UInt8]?) throws -> [UInt8] {
            var capabilities: Capabilities = [.encryption]
            if secret != nil { capabilities.insert(.preSharedKey) }
            hello = try StreamFraming.encode(
                .hello(
                    Hello(
                        peerID: claimed ?? identity.peerID, incarnation: 5, capabilities: capabilities,
                        displayName: "raw", sessionName: "s")))
            let acceptor = try StreamFraming.encode(.hello(sessionHello))
            var handshake = NoiseHandshake(
                role: .initiator, staticKey: identity.staticKey,
                prologue: LinkSecurity.prologue(dialerHello: hello, acceptorHello: acceptor),
                psk: try secret.map { try SessionSecret(secret: $0, sessionName: "s") })
            let first = try handshake.writeMessage(payload: [])
            self.handshake = handshake
            return hello + (try StreamFraming.encode(.noise(first)))
        }

        /// Reads message 2 and answers with message 3; the keys are split.
        mutating func finish(_ second: [UInt8]) throws -> (payload: HandshakePayload, third: [UInt8]) {
            var handshake = try #require(self.handshake)
            let payload = try HandshakePayload.decode(try handshake.readMessage(second))
            let third = try handshake.writeMessage(
                payload: HandshakePayload(signingKey: identity.signingPublicKey).encoded())
            let keys = try handshake.split()
            self.keys = keys
            sealer = keys.makeRecordSealer()
            opener = keys.makeRecordOpener()
            self.handshake = handshake
            return (payload, try StreamFraming.encode(.noise(third)))
        }

        /// Seals `messages` as the next records of this side.
        mutating func seal(_ messages: [Message]) throws -> [UInt8] {
            var sealer = try #require(self.sealer)
            defer { self.sealer = sealer }
            var frames: [UInt8] = []
            for message in messages { frames += try StreamFraming.encode(message) }
            var sealed: [UInt8] = []
            try frames.withUnsafeBytes { try sealer.seal($0, into: &sealed) }
            return sealed
        }

        /// Opens the session's next records.
        mutating func open(_ bytes: [UInt8]) throws -> [Message] {
            var opener = try #require(self.opener)
            defer { self.opener = opener }
            var pending = bytes[...]
            var plaintext: [UInt8] = []
            while let (opened, consumed) = try Array(pending).withUnsafeBytes({ try opener.open($0) }) {
                plaintext += opened
                pending = pending.dropFirst(consumed)
            }
            #expect(pending.isEmpty)
            var decoder = StreamDecoder()
            decoder.append(contentsOf: plaintext)
            var messages: [Message] = []
            while let message = try decoder.next() { messages.append(message) }
            return messages
        }
    }

    /// The clear messages in `bytes`.
    func messages(_ bytes: [UInt8]) throws -> [Message] {
        var decoder = StreamDecoder()
        decoder.append(contentsOf: bytes)
        var messages: [Message] = []
        while let message = try decoder.next() { messages.append(message) }
        return messages
    }

    /// Runs the handshake up to message 2; returns the session's hello and message 2.
    func begin(
        _ peer: inout Peer, _ embedded: EmbeddedCore, _ channel: EmbeddedChannel, secret: [UInt8]?
    ) throws
        -> [UInt8]
    {
        guard case .hello(let hello)? = try messages(try embedded.outbound(channel)).first else {
            throw SessionError(.io, "no hello")
        }
        #expect(hello.capabilities.contains(.encryption))
        try channel.writeInbound(ByteBuffer(bytes: try peer.open(to: hello, secret: secret)))
        guard case .noise(let second)? = try messages(try embedded.outbound(channel)).first else {
            throw SessionError(.io, "no message 2")
        }
        return second
    }

    @Test(
        "with the secret: clear hellos and Noise messages, then sealed frames both ways; the peer connects and counts")
    func member() throws {
        let (embedded, channel) = try acceptedLink()
        var peer = Peer()
        let second = try begin(&peer, embedded, channel, secret: secretBytes)
        #expect(embedded.info(peer.identity.peerID) == nil)  // nothing is kept before the handshake completes
        let (payload, third) = try peer.finish(second)
        #expect(payload.signingKey == embedded.configuration.identity.signingPublicKey)
        // Message 3, then everything sealed: invitation, resume, an increment — in one write.
        let sealed = try peer.seal([
            .invitation(Invitation()), .resume(Resume(received: 0, nextSequence: 1)), .counterIncrement(count: 3),
        ])
        try channel.writeInbound(ByteBuffer(bytes: third + sealed))
        let info = try #require(embedded.info(peer.identity.peerID))
        #expect(info.state == .connected)
        #expect(info.encrypted)
        #expect(info.trust == .secret)
        #expect(info.fingerprint == peer.identity.fingerprint)
        #expect(embedded.increments == [3])
        // What the session wrote after message 2 is sealed records only: they open with the peer's keys.
        let kinds = try peer.open(try embedded.outbound(channel)).map(\.kind)
        #expect(kinds.contains(.accept))
        #expect(kinds.contains(.resume))  // the leader's activation travels sealed
    }

    /// Runs the whole handshake with the secret and the peer's activation: the peer is connected, sealed.
    func connect(_ peer: inout Peer, _ embedded: EmbeddedCore, _ channel: EmbeddedChannel) throws {
        let second = try begin(&peer, embedded, channel, secret: secretBytes)
        let (_, third) = try peer.finish(second)
        try channel.writeInbound(
            ByteBuffer(
                bytes: third
                    + (try peer.seal([.invitation(Invitation()), .resume(Resume(received: 0, nextSequence: 1))]))))
        #expect(embedded.info(peer.identity.peerID)?.state == .connected)
    }

    @Test("data messages reach the subscriber in one batch per read; a slice held stays right as records are opened")
    func dataSlices() async throws {
        let (embedded, channel) = try acceptedLink()
        let batches = embedded.fanout.subscribe(bufferSize: 64, splitting: false)
        let each = embedded.fanout.subscribe(bufferSize: 64, splitting: true)
        var peer = Peer()
        try connect(&peer, embedded, channel)
        // Four messages, their frames cut across three records, in three reads: the second message spans records.
        let payloads: [[UInt8]] = [
            Array(repeating: 1, count: 100), Array(repeating: 2, count: 5_000), Array(repeating: 3, count: 7),
            Array(repeating: 4, count: 2_000),
        ]
        var frames: [UInt8] = []
        for payload in payloads { frames += try StreamFraming.encode(.data(payload)) }
        var sealer = try #require(peer.sealer)
        for range in [0..<1_000, 1_000..<5_200, 5_200..<frames.count] {
            var record: [UInt8] = []
            try frames[range].withUnsafeBytes { try sealer.seal($0, into: &record) }
            try channel.writeInbound(ByteBuffer(bytes: record))
        }
        peer.sealer = sealer
        embedded.fanout.finish()  // what was yielded stays to be read; the streams end after it
        var received: [ReceivedMessages] = []
        for await event in batches {
            if case .messages(let batch) = event { received.append(batch) }
        }
        // Frames end at bytes 103, 5,108, 5,118 and 7,121: the reads (records) end at 1,000, 5,200 and 7,121.
        #expect(received.map(\.count) == [1, 2, 1], "one batch per read")
        #expect(received.allSatisfy { $0.from == peer.identity.peerID && $0.reliable })
        let digest = { (messages: [[UInt8]]) in
            messages.map { "\($0.count)×\($0.first ?? 0)/\($0.reduce(0) { $0 &+ Int($1) })" }
        }
        #expect(digest(received.flatMap(\.messages).map { Array($0.readableBytesView) }) == digest(payloads))
        var one: [[UInt8]] = []
        for await event in each {
            if case .data(_, let bytes, true) = event { one.append(Array(bytes.readableBytesView)) }
        }
        #expect(digest(one) == digest(payloads), "one event per message for a subscriber that takes them so")
    }

    @Test("a large data message is sealed with its frame's header: no record of the header alone")
    func largeDataSealedWithItsHeader() throws {
        let (embedded, channel) = try acceptedLink()
        var peer = Peer()
        try connect(&peer, embedded, channel)
        _ = try peer.open(try embedded.outbound(channel))
        let payload = (0..<40_000).map { UInt8(truncatingIfNeeded: $0) }
        _ = try embedded.components.sender.sendData(
            [ByteBuffer(bytes: [9]), ByteBuffer(bytes: payload)], to: [peer.identity.peerID], reliable: true)
        let bytes = try embedded.outbound(channel)
        let total = try StreamFraming.encode(.data([9])).count + (try StreamFraming.encode(.data(payload))).count
        #expect(bytes.count == RecordSealer.sealedSize(of: total), "as few records as the bytes need")
        #expect(try peer.open(bytes) == [.data([9]), .data(payload)])
    }

    @Test("a wrong secret: message 3 fails, the link closes, nothing of the peer is kept")
    func wrongSecret() throws {
        let (embedded, channel) = try acceptedLink()
        var peer = Peer()
        let second = try begin(&peer, embedded, channel, secret: Array("guess".utf8))
        let (_, third) = try peer.finish(second)
        try channel.writeInbound(ByteBuffer(bytes: third))
        #expect(!channel.isActive)
        #expect(embedded.components.reporter.peerInfos().isEmpty)
        #expect(embedded.core.securityStatistics().failedHandshakes == 1)
    }

    @Test("a hello without encryption: declined as authenticationFailed before anything is kept")
    func noEncryption() throws {
        let (embedded, channel) = try acceptedLink()
        _ = try embedded.outbound(channel)
        try channel.writeInbound(
            ByteBuffer(
                bytes: try StreamFraming.encode(
                    .hello(Hello(peerID: PeerID(77), incarnation: 5, displayName: "raw", sessionName: "s")))))
        #expect(try messages(try embedded.outbound(channel)) == [.decline(.authenticationFailed)])
        #expect(!channel.isActive)
        #expect(embedded.components.reporter.peerInfos().isEmpty)
    }

    @Test("a device that completes the handshake with the secret but claims another's peer id is refused, sealed")
    func impostor() throws {
        let (embedded, channel) = try acceptedLink()
        var peer = Peer()
        peer.claimed = PeerID(77)
        let second = try begin(&peer, embedded, channel, secret: secretBytes)
        let (_, third) = try peer.finish(second)
        try channel.writeInbound(
            ByteBuffer(bytes: third + (try peer.seal([.invitation(Invitation()), .counterIncrement(count: 5)]))))
        #expect(try peer.open(try embedded.outbound(channel)) == [.decline(.authenticationFailed)])
        #expect(!channel.isActive)
        #expect(embedded.components.reporter.peerInfos().isEmpty)
        #expect(embedded.increments.isEmpty)
        #expect(embedded.core.securityStatistics().failedHandshakes == 1)
    }

    @Test("commands in clear after the handshake, or a record with a flipped bit, close the link with nothing counted")
    func clearAfterHandshake() throws {
        for tamper in [false, true] {
            let (embedded, channel) = try acceptedLink()
            var peer = Peer()
            let second = try begin(&peer, embedded, channel, secret: secretBytes)
            var (_, bytes) = try peer.finish(second)
            var sealed = try peer.seal([.invitation(Invitation())])
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

    @Test("an acceptor that gives a link up between Noise messages 2 and 3 writes nothing more: it closes silently")
    func nothingBetweenMessages2And3() throws {
        let (embedded, channel) = try acceptedLink()
        var peer = Peer()
        _ = try begin(&peer, embedded, channel, secret: secretBytes)
        _ = embedded.core.stop()
        #expect(try embedded.outbound(channel).isEmpty, "a clear decline the dialer would try to open as a record")
        #expect(!channel.isActive)
        // Before message 1 the acceptor still declines in clear: the dialer reads in clear until message 2.
        let (early, earlyChannel) = try acceptedLink()
        _ = try early.outbound(earlyChannel)
        _ = early.core.stop()
        #expect(try messages(try early.outbound(earlyChannel)) == [.decline(.duplicateLink)])
    }

    @Test("admission paired: an untrusted device may ask to pair, and nothing else reaches the application")
    func stranger() throws {
        for invites in [false, true] {
            let (embedded, channel) = try acceptedLink(admission: .paired)
            var peer = Peer()
            let second = try begin(&peer, embedded, channel, secret: nil)
            let (_, third) = try peer.finish(second)
            let keys = try #require(peer.keys)
            if invites {
                _ = try embedded.outbound(channel)
                try channel.writeInbound(
                    ByteBuffer(
                        bytes: third + (try peer.seal([.invitation(Invitation()), .counterIncrement(count: 5)]))))
                // A dialer that trusts this side hears why its invitation went nowhere (section 9.5), sealed.
                #expect(try peer.open(try embedded.outbound(channel)) == [.decline(.notTrusted)])
                #expect(!channel.isActive)
                #expect(embedded.increments.isEmpty)
                #expect(embedded.components.reporter.peerInfos().isEmpty)
                continue
            }
            try channel.writeInbound(ByteBuffer(bytes: third + (try peer.seal([.pairing(.request)]))))
            #expect(channel.isActive)
            let requests = embedded.components.trust.requests
            #expect(requests.map(\.peerID) == [peer.identity.peerID])
            #expect(embedded.components.reporter.peerInfos().isEmpty, "a stranger is listed among the peers")
            // Both sides show the same code: the handshake hash's.
            #expect(requests.first?.code == keys.pairingCode)
            // A wrong code is refused; the right one sends confirm; the peer's confirm then makes the pair.
            let wrong = keys.pairingCode == "000000" ? "000001" : "000000"
            let refusal = #expect(throws: SessionError.self) {
                try embedded.components.trust.confirmPairing(with: peer.identity.peerID, code: wrong)
            }
            #expect(refusal?.message.contains("the pairing goes on") == true, "\(String(describing: refusal))")
            #expect(embedded.components.trust.requests.map(\.peerID) == [peer.identity.peerID], "a wrong code ended it")
            #expect(try peer.open(try embedded.outbound(channel)).isEmpty, "a wrong code sent something")
            try embedded.components.trust.confirmPairing(with: peer.identity.peerID, code: keys.pairingCode)
            #expect(try peer.open(try embedded.outbound(channel)) == [.pairing(.confirm)])
            #expect(embedded.components.trust.devices.isEmpty)
            try channel.writeInbound(ByteBuffer(bytes: try peer.seal([.pairing(.confirm)])))
            #expect(embedded.components.trust.devices.first { $0.peerID == peer.identity.peerID }?.trust == .paired)
            // The link goes on as a member's: the invitation is accepted and the increment counted.
            _ = try peer.open(try embedded.outbound(channel))
            try channel.writeInbound(
                ByteBuffer(
                    bytes: try peer.seal([
                        .invitation(Invitation()), .resume(Resume(received: 0, nextSequence: 1)),
                        .counterIncrement(count: 4),
                    ])))
            #expect(embedded.info(peer.identity.peerID)?.state == .connected)
            #expect(embedded.info(peer.identity.peerID)?.trust == .paired)
            #expect(embedded.increments == [4])
        }
    }
}
