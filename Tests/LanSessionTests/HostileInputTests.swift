import Foundation
import LanSession
import TestSupport
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
    func connectedRawPeerWithDatagrams() async throws -> (
        Session, EventRecorder<SessionEvent>, RawPeer, DatagramSink, Hello
    ) {
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

    @Test("a malformed frame closes that connection only, with a notice saying why; the session serves the next peer")
    func malformedFrame() async throws {
        let session = try makeSession(1)
        let events = EventRecorder(session)
        let port = try await session.start()
        let garbage = try RawPeer(port: port)
        garbage.send([0x05, 0x99, 0x01, 0x02, 0x03, 0x04])  // kind 0x99 is unknown
        #expect(garbage.closedByPeer())
        let oversized = try RawPeer(port: port)
        oversized.send([0xFF, 0xFF, 0xFF, 0x7F])  // a frame far above the limit
        #expect(oversized.closedByPeer())
        #expect(
            await events.wait { events in
                events.filter {
                    if case .notice(.linkRejected(_, let reason)) = $0 {
                        reason.contains("malformed frame")
                    } else {
                        false
                    }
                }.count == 2
            })
        // A real peer still gets in.
        let other = try makeSession(2)
        try await other.start()
        try await other.connect(to: await session.endpoint)
        #expect(try await waitUntil { try await session.connectedPeers().count == 1 })
        await stopAll([session, other])
    }

    @Test("a command before the handshake is a protocol error")
    func commandBeforeHandshake() async throws {
        let session = try makeSession(1)
        let port = try await session.start()
        let raw = try RawPeer(port: port)
        try raw.send(.data([5]))
        _ = raw.receive()  // the session's hello
        #expect(raw.receive() == .bye(.protocolError))
        #expect(try await session.peers().isEmpty, "nothing of it is kept")
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
        #expect(try await waitUntil { try await session.peers().first?.unreliable == .udp })
        #expect(
            !events.events.contains {
                if case .peerState(let info) = $0 { info.unreliable == .fallback } else { false }
            })
        await session.stop()
    }
}
