import Foundation
import LanSession
import Testing
import WireCodec

#if canImport(Glibc)
    import Glibc
#endif

/// Peers that misbehave, driven by hand over raw sockets.
@Suite("Session against raw peers", .serialized)
struct HostileInputTests {
    func hello(version: UInt32 = Wire.protocolVersion, session: String = "test", id: UInt64 = 77) -> Message {
        .hello(
            Hello(
                protocolVersion: version, peerID: PeerID(id), incarnation: 1, displayName: "raw",
                sessionName: session))
    }

    /// A session, and a raw peer connected to it that says it takes datagrams at a `DatagramSink`.
    func connectedRawPeerWithDatagrams() async throws -> (Session, EventRecorder, RawPeer, DatagramSink, Hello) {
        let sink = try DatagramSink()
        let session = try makeSession(1)
        let events = EventRecorder(session)
        let (raw, sessionHello) = try handshakeWithDatagrams(port: try await session.start(), datagramPort: sink.port)
        #expect(await events.wait { $0.contains(.peerConnected(PeerID(77), name: "raw")) })
        return (session, events, raw, sink, sessionHello)
    }

    /// A raw peer that says it takes datagrams on `datagramPort`, through the handshake; and the session's hello.
    func handshakeWithDatagrams(port: Int, datagramPort: Int) throws -> (RawPeer, Hello) {
        let raw = try RawPeer(port: port)
        try raw.send(
            .hello(
                Hello(
                    protocolVersion: Wire.protocolVersion, peerID: PeerID(77), incarnation: 1,
                    capabilities: [.datagrams], datagramPort: UInt16(datagramPort), displayName: "raw",
                    sessionName: "test")))
        try raw.send(.invitation(Invitation()))
        var sessionHello: Hello?
        while let message = raw.receive() {
            if case .hello(let hello) = message { sessionHello = hello }
            if case .resume = message { break }
        }
        try raw.send(.resume(Resume(received: 0, nextSequence: 1)))
        guard let sessionHello else { throw POSIXError(.EPROTO) }
        return (raw, sessionHello)
    }

    @Test("a peer of another protocol version is declined with versionMismatch")
    func versionMismatch() async throws {
        let session = try makeSession(1)
        let events = EventRecorder(session)
        let port = try await session.start()
        let raw = try RawPeer(port: port)
        try raw.send(hello(version: Wire.protocolVersion + 1))
        guard case .hello? = raw.receive() else {
            Issue.record("expected the session's hello first")
            return
        }
        #expect(raw.receive() == .decline(.versionMismatch))
        #expect(raw.closedByPeer())
        #expect(
            await events.wait { events in
                events.contains { if case .declined(PeerID(77), _, .versionMismatch) = $0 { true } else { false } }
            })
        await session.stop()
    }

    @Test("a malformed frame closes that connection only; the session serves the next peer")
    func malformedFrame() async throws {
        let session = try makeSession(1)
        let port = try await session.start()
        let garbage = try RawPeer(port: port)
        garbage.send([0x05, 0x99, 0x01, 0x02, 0x03, 0x04])  // kind 0x99 is unknown
        #expect(garbage.closedByPeer())
        let oversized = try RawPeer(port: port)
        oversized.send([0xFF, 0xFF, 0xFF, 0x7F])  // a frame far above the limit
        #expect(oversized.closedByPeer())
        // A real peer still gets in.
        let other = try makeSession(2)
        try await other.start()
        try await other.connect(to: await session.endpoint)
        #expect(try await eventually { try await session.connectedPeers().count == 1 })
        await stopAll([session, other])
    }

    @Test("a command before the handshake is a protocol error")
    func commandBeforeHandshake() async throws {
        let session = try makeSession(1)
        let port = try await session.start()
        let raw = try RawPeer(port: port)
        try raw.send(.counterIncrement(count: 5))
        _ = raw.receive()  // the session's hello
        #expect(raw.receive() == .bye(.protocolError))
        #expect(try await session.counter().total == 0)
        await session.stop()
    }

    @Test("a peer that completes the handshake and goes silent is lost within the liveness timeout")
    func silentPeer() async throws {
        let session = try makeSession(1)
        let events = EventRecorder(session)
        let port = try await session.start()
        let raw = try RawPeer(port: port)
        try raw.send(hello())
        try raw.send(.invitation(Invitation()))
        var accepted = false
        while let message = raw.receive() {
            if case .accept = message { accepted = true }
            if case .resume = message { break }
        }
        #expect(accepted)
        try raw.send(.resume(Resume(received: 0, nextSequence: 1)))
        #expect(await events.wait { $0.contains(.peerConnected(PeerID(77), name: "raw")) })
        let connectedAt = ContinuousClock.now
        // From now on the raw peer answers nothing, not even the session's heartbeats.
        #expect(await events.wait(timeout: .seconds(4)) { $0.contains(.peerLost(PeerID(77))) })
        let elapsed = ContinuousClock.now - connectedAt
        // Declared at the first 50 ms tick after 2 s of silence; a loaded machine may run that tick late.
        #expect(elapsed < .milliseconds(2_500), "lost after \(elapsed)")
        #expect(elapsed >= .milliseconds(1_900), "lost too early, after \(elapsed)")
        await session.stop()
    }

    @Test("a peer that answers on its link and never by datagram gets unreliable messages on its link")
    func deafToDatagrams() async throws {
        let (session, _, raw, sink, _) = try await connectedRawPeerWithDatagrams()
        let connectedAt = ContinuousClock.now
        // The raw peer answers the pings on its link, as a live peer does, until the session gives up on datagrams.
        var route = try await session.peers().first?.unreliable
        while route != .fallback, ContinuousClock.now - connectedAt < .seconds(5), let message = raw.receive() {
            if case .ping(let ping) = message { try raw.send(.pong(ping)) }
            route = try await session.peers().first?.unreliable
        }
        let elapsed = ContinuousClock.now - connectedAt
        #expect(route == .fallback, "still \(String(describing: route)) after \(elapsed)")
        #expect(elapsed >= .seconds(1), "fell back before the probe timeout, after \(elapsed)")
        #expect(sink.drain().count >= 5)
        #expect(try await session.connectedPeers().count == 1)
        await session.stop()
    }

    @Test("a peer that answers nothing on any channel past the probe timeout is busy: its datagrams are not lost")
    func busyPeer() async throws {
        let (session, events, raw, sink, sessionHello) = try await connectedRawPeerWithDatagrams()
        // Busy: it reads nothing while the session's probes come, one per 200 ms, until they are 1.4 s overdue (the
        // probe timeout is 1 s; the session has sent its witness on the link by then).
        let probes = sink.receive(count: 8, timeout: .seconds(4))
        #expect(probes.count == 8)
        #expect(try await session.peers().first?.unreliable == .probing)
        // It catches up: the probes, by datagram, as they came, then the pings on its link.
        for probe in probes + sink.drain() {
            let pong = probe.withUnsafeBytes { bytes -> Datagram? in
                guard var reader = try? DatagramReader(bytes), case .ping(let ping)? = try? reader.next() else {
                    return nil
                }
                return Datagram(
                    header: DatagramHeader(linkToken: reader.header.linkToken, sequence: 0), messages: [.pong(ping)])
            }
            if let pong { sink.send(try pong.encode(), toPort: Int(sessionHello.datagramPort)) }
        }
        while let message = raw.receive(timeout: .milliseconds(100)) {
            if case .ping(let ping) = message { try raw.send(.pong(ping)) }
        }
        #expect(try await eventually { try await session.peers().first?.unreliable == .udp })
        #expect(
            !events.events.contains {
                if case .peerState(let info) = $0 { info.unreliable == .fallback } else { false }
            })
        await session.stop()
    }

    @Test("increments that overflow the replay buffer while a link is down are re-synchronised, not lost")
    func overflowResynchronises() async throws {
        let a = try Session(
            configuration: SessionConfiguration(
                peerID: PeerID(1), displayName: "a", sessionName: "test", host: "127.0.0.1",
                reconnectInitialDelay: .milliseconds(300)))
        let b = try Session(
            configuration: SessionConfiguration(
                peerID: PeerID(2), displayName: "b", sessionName: "test", host: "127.0.0.1",
                reconnectInitialDelay: .milliseconds(300),
                replayBufferMessages: 16))
        let eventsA = EventRecorder(a)
        try await a.start()
        try await b.start()
        try await b.connect(to: await a.endpoint)  // both wait 300 ms before redialling
        #expect(try await eventually { try await bothConnected(a, b) })
        try await a.dropLink(to: PeerID(2))
        #expect(await eventsA.wait { $0.contains(.peerLost(PeerID(2))) })
        // Each increment is read back before the next, so that each leaves as a message of its own (the increments
        // of one turn of the loop coalesce into one): 200 messages for a replay buffer of 16.
        for _ in 0..<200 {
            try await b.increment()
            _ = try await b.counter()
        }
        #expect(try await eventually(timeout: .seconds(5)) { try await a.counter()[PeerID(2)] == 200 })
        #expect(eventsA.events.contains { if case .resynchronised(PeerID(2), _) = $0 { true } else { false } })
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await a.counter()[PeerID(2)] == 200)
        await stopAll([a, b])
    }
}

/// Datagrams that do not carry a link's token are dropped.
@Suite("Session against forged datagrams", .serialized)
struct ForgedDatagramTests {
    @Test("a move with an unknown token is dropped; the holder's own moves still apply")
    func forgedMove() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        let eventsB = EventRecorder(b)
        try await mesh([a, b])
        #expect(try await eventually { try await b.peers().first?.unreliable == .udp })
        try await a.pickUp(0)
        #expect(try await eventually { try await b.bubbles().bubbles[0].holder == PeerID(1) })

        let forged = try Datagram(
            header: DatagramHeader(linkToken: 0xDEAD_BEEF, sequence: 1),
            messages: [.move(Move(view: 0, x: 999, y: 999, sequence: 60_000))]
        ).encode()
        let sender = try DatagramSink()
        let port = await b.port
        for _ in 0..<20 { sender.send(forged, toPort: port) }
        try await a.move(0, x: 10, y: 20)
        #expect(await eventsB.wait { $0.contains(.move(view: 0, x: 10, y: 20, by: PeerID(1))) })
        #expect(!eventsB.events.contains(.move(view: 0, x: 999, y: 999, by: PeerID(1))))
        let bubble = try await b.bubbles().bubbles[0]
        #expect(bubble.x == 10 && bubble.y == 20)
        await stopAll([a, b])
    }
}
