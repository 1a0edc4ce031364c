import LanSession
import TestSupport
import Testing

/// Two sessions on loopback that offer different ciphers (as `LANSESSION_CIPHERS` sets them in sessiond) agree on
/// one, connect, and exchange messages on both channels; with no cipher in common they refuse each other.
@Suite("The cipher of a link between sessions", .serialized)
struct CipherNegotiationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let dialer: [NoiseCipher]
        let acceptor: [NoiseCipher]
        let secret: Bool
        let expected: NoiseCipher

        var testDescription: String {
            "\(dialer) dials \(acceptor)\(secret ? " with a secret" : ""): \(expected)"
        }
    }

    static let cases = [
        Case(dialer: [.aesGCM, .chaChaPoly], acceptor: [.aesGCM, .chaChaPoly], secret: false, expected: .aesGCM),
        Case(dialer: [.chaChaPoly, .aesGCM], acceptor: [.aesGCM], secret: true, expected: .aesGCM),
        Case(dialer: [.aesGCM, .chaChaPoly], acceptor: [.chaChaPoly], secret: false, expected: .chaChaPoly),
        Case(dialer: [.chaChaPoly], acceptor: [.aesGCM, .chaChaPoly], secret: true, expected: .chaChaPoly),
    ]

    func session(_ name: String, _ ciphers: [NoiseCipher], secret: Bool) throws -> Session {
        try makeSecureSession(
            name: name, admission: secret ? .secret(Array("a secret of the cipher tests".utf8)) : .open
        ) {
            $0.ciphers = ciphers
        }
    }

    @Test("they connect with the cipher both hellos choose and exchange messages", arguments: cases)
    func connects(_ test: Case) async throws {
        let a = try session("a", test.dialer, secret: test.secret)
        let b = try session("b", test.acceptor, secret: test.secret)
        let eventsB = EventRecorder(b)
        try await b.start()
        try await a.start()
        try await a.connect(to: await b.endpoint)
        #expect(try await waitUntil(.seconds(5)) { try await bothConnected(a, b) })
        for (session, other) in [(a, b), (b, a)] {
            let peer = try #require(try await session.peers().first { $0.peerID == other.peerID })
            #expect(peer.encrypted && peer.cipher == test.expected)
            #expect(peer.links.first?.cipher == test.expected)
        }
        try await a.send(Array("sealed".utf8), to: [b.peerID])
        #expect(
            await eventsB.wait {
                $0.contains(.data(from: a.peerID, bytes: ByteBuffer(string: "sealed"), reliable: true))
            })
        // Datagrams, sealed with the same cipher, once the probe found UDP.
        #expect(try await waitUntil(.seconds(5)) { try await a.peers().first?.unreliable == .udp })
        try await a.send(Array("datagram".utf8), to: [b.peerID], mode: .unreliable)
        #expect(
            await eventsB.wait {
                $0.contains(.data(from: a.peerID, bytes: ByteBuffer(string: "datagram"), reliable: false))
            })
        await stopAll([a, b])
    }

    @Test("a session limited to AES-GCM and one without it refuse each other: failed handshakes, no peer")
    func noCipherInCommon() async throws {
        let a = try session("a", [.chaChaPoly], secret: false)
        let b = try session("b", [.aesGCM], secret: false)
        try await b.start()
        try await a.start()
        try await a.connect(to: await b.endpoint)
        let refused = try await waitUntil(.seconds(5)) {
            let atA = try await a.security().failedHandshakes
            let atB = try await b.security().failedHandshakes
            return atA > 0 && atB > 0
        }
        #expect(refused)
        let connectedA = try await a.connectedPeers()
        let connectedB = try await b.connectedPeers()
        #expect(connectedA.isEmpty && connectedB.isEmpty)
        await stopAll([a, b])
    }

    @Test("a configuration without ciphers, or with one twice, is refused")
    func validation() throws {
        for ciphers: [NoiseCipher] in [[], [.aesGCM, .aesGCM]] {
            #expect(throws: SessionError.self) { try session("a", ciphers, secret: false) }
        }
        #expect(SessionConfiguration(displayName: "a").ciphers == NoiseCipher.defaultOffer)
    }
}
