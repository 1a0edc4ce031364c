import Foundation
import LanSession
import TestSupport
import Testing
import WireCodec

/// One state per peer for applications, with the reason when it is not connected.
@Suite("Peer states over loopback", .serialized)
struct PeerStateTests {
    func changes(_ events: [SessionEvent], of peer: PeerID) -> [PeerConnectionState] {
        events.compactMap { if case .peerChanged(peer, let state) = $0 { state } else { nil } }
    }

    @Test("a peer goes connecting, connected, then not connected because it left, one event per change")
    func leftWithReason() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        let recorder = EventRecorder(a)
        try await mesh([a, b])
        #expect(await recorder.wait { changes($0, of: b.peerID).last == .connected })
        #expect(try await a.connectionState(of: b.peerID) == .connected)
        await b.stop()
        #expect(await recorder.wait { changes($0, of: b.peerID).last == .notConnected(.left(.leaving)) })
        let seen = changes(recorder.events, of: b.peerID)
        #expect(seen.first == .connecting || seen.first == .connected)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 != $1 }, "no repeated state: \(seen)")
        await a.stop()
    }

    @Test("disconnect leaves the peer on both sides, and it is not redialled")
    func disconnect() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        let states = a.connectionStates(of: b.peerID)
        let seenByB = EventRecorder(b)
        try await mesh([a, b])
        var iterator = states.makeAsyncIterator()
        while let state = await iterator.next(), state != .connected {}
        try await a.disconnect(b.peerID)
        #expect(await iterator.next() == .notConnected(.disconnected))
        #expect(await seenByB.wait { changes($0, of: a.peerID).last == .notConnected(.left(.leaving)) })
        // That it is not redialled later is the dialler's (DiallerTests, on a clock the test moves).
        #expect(try await a.connectionState(of: b.peerID) == .notConnected(.disconnected))
        #expect(try await b.connectedPeers().isEmpty)
        await stopAll([a, b])
    }

    @Test("an endpoint that refuses connections is reported, and retried")
    func connectFailed() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        try await b.start()
        let unused = await b.endpoint
        await b.stop()  // nothing listens there now
        let recorder = EventRecorder(a)
        try await a.start()
        try await a.connect(to: unused)
        let reported = await recorder.wait {
            $0.filter { if case .connectFailed(unused, _) = $0 { true } else { false } }.count >= 2
        }
        #expect(reported, "two failed attempts reported: \(recorder.events)")
        await a.stop()
    }
}
