import Foundation
import LanSession
import NIOCore
import Testing
import WireCodec

/// Whether each of two sessions has exactly one connected peer.
func bothConnected(_ a: Session, _ b: Session) async throws -> Bool {
    let atA = try await a.connectedPeers().count
    let atB = try await b.connectedPeers().count
    return atA == 1 && atB == 1
}

/// Sessions in this process, linked over loopback with static endpoints.
@Suite("Session over loopback", .serialized)
struct SessionTests {
    @Test("two peers complete the handshake both ways")
    func handshake() async throws {
        let a = try makeSession(1, name: "alice")
        let b = try makeSession(2, name: "bob")
        let eventsA = EventRecorder(a)
        let eventsB = EventRecorder(b)
        try await mesh([a, b])
        #expect(await eventsA.wait { $0.contains(.peerConnected(PeerID(2), name: "bob")) })
        #expect(await eventsB.wait { $0.contains(.peerConnected(PeerID(1), name: "alice")) })
        let peersOfA = try await a.peers()
        #expect(peersOfA.map(\.state) == [.connected])
        #expect(peersOfA.first?.name == "bob")
        #expect(peersOfA.first?.transport == "lan")
        #expect(try await eventually { try await a.peers().first?.unreliable == .udp })
        #expect(try await eventually { try await a.peers().first?.rttMicros != nil })
        await stopAll([a, b])
    }

    @Test("three peers form a mesh and agree on player indexes")
    func threePeers() async throws {
        let sessions = try [makeSession(30), makeSession(10), makeSession(20)]
        try await mesh(sessions)
        for session in sessions {
            #expect(try await eventually { try await session.connectedPeers().count == 2 })
        }
        let expected: [PeerID: Int] = [PeerID(10): 0, PeerID(20): 1, PeerID(30): 2]
        for session in sessions {
            #expect(try await eventually { try await session.layout().indexes == expected })
        }
        let indexes = try await sessions[0].peers().map { $0.playerIndex }
        #expect(Set(indexes.compactMap { $0 }) == [0, 1])
        await stopAll(sessions)
    }

    @Test("10,000 increments arrive exactly once")
    func tenThousandIncrements() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        try await mesh([a, b])
        #expect(try await eventually { try await bothConnected(a, b) })
        for _ in 0..<10_000 { try await a.increment() }
        #expect(try await eventually(timeout: .seconds(10)) { try await b.counter()[PeerID(1)] == 10_000 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await b.counter()[PeerID(1)] == 10_000)
        #expect(try await a.counter()[PeerID(1)] == 10_000)
        await stopAll([a, b])
    }

    @Test("a link cut mid-stream reconnects and resumes with nothing lost or duplicated")
    func cutAndResume() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        let eventsB = EventRecorder(b)
        try await mesh([a, b])
        #expect(try await eventually { try await bothConnected(a, b) })
        for round in 0..<5 {
            for _ in 0..<1_000 { try await a.increment() }
            if round < 4 { try await a.dropLink(to: PeerID(2)) }
            for _ in 0..<1_000 { try await b.increment() }
        }
        #expect(
            try await eventually(timeout: .seconds(15)) {
                let atB = try await b.counter()[PeerID(1)]
                let atA = try await a.counter()[PeerID(2)]
                return atB == 5_000 && atA == 5_000
            })
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await b.counter().counts == [PeerID(1): 5_000, PeerID(2): 5_000])
        #expect(try await a.counter().counts == [PeerID(1): 5_000, PeerID(2): 5_000])
        let lost = eventsB.events.filter { if case .peerLost = $0 { true } else { false } }.count
        #expect(lost >= 1, "the cut was not noticed")
        #expect(try await eventually { try await b.connectedPeers().count == 1 })
        await stopAll([a, b])
    }

    @Test("simultaneous connects leave exactly one link, for good")
    func simultaneousConnects() async throws {
        for _ in 0..<5 {
            let a = try makeSession(1)
            let b = try makeSession(2)
            let eventsA = EventRecorder(a)
            try await a.start()
            try await b.start()
            let endpointA = await a.endpoint
            let endpointB = await b.endpoint
            async let one: Void = a.connect(to: endpointB)
            async let two: Void = b.connect(to: endpointA)
            _ = try await (one, two)
            #expect(try await eventually { try await bothConnected(a, b) })
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await a.connectedPeers().count == 1)
            #expect(try await b.connectedPeers().count == 1)
            let connects = eventsA.events.filter { if case .peerConnected = $0 { true } else { false } }.count
            let losses = eventsA.events.filter { if case .peerLost = $0 { true } else { false } }.count
            #expect(connects - losses == 1, "connected \(connects) times, lost \(losses)")
            #expect(losses == 0, "the surviving link flapped")
            await stopAll([a, b])
        }
    }

    @Test("moves from the holder arrive; the drop lands everywhere")
    func moves() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        let eventsB = EventRecorder(b)
        try await mesh([a, b])
        #expect(try await eventually { try await b.peers().first?.unreliable == .udp })
        try await a.pickUp(0)
        #expect(try await eventually { try await b.bubbles().bubbles[0].holder == PeerID(1) })
        for step in 1...100 { try await a.move(0, x: Float(step), y: Float(2 * step)) }
        #expect(await eventsB.wait { $0.contains(.move(view: 0, x: 100, y: 200, by: PeerID(1))) })
        try await a.drop(0, x: 123, y: 456)
        #expect(
            try await eventually {
                let bubble = try await b.bubbles().bubbles[0]
                return bubble.holder == nil && bubble.x == 123 && bubble.y == 456
            })
        await stopAll([a, b])
    }

    @Test("without datagrams, unreliable messages fall back to the reliable link")
    func datagramFallback() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2, datagrams: false)
        let eventsB = EventRecorder(b)
        try await mesh([a, b])
        #expect(try await eventually { try await a.peers().first?.unreliable == .fallback })
        try await a.pickUp(1)
        #expect(try await eventually { try await b.bubbles().bubbles[1].holder == PeerID(1) })
        try await a.move(1, x: 7, y: 8)
        #expect(await eventsB.wait { $0.contains(.move(view: 1, x: 7, y: 8, by: PeerID(1))) })
        await stopAll([a, b])
    }

    @Test("a pick-up conflict resolves to the same holder everywhere")
    func pickUpConflict() async throws {
        for _ in 0..<5 {
            let sessions = try [makeSession(1), makeSession(2), makeSession(3)]
            try await mesh(sessions)
            for session in sessions {
                #expect(try await eventually { try await session.connectedPeers().count == 2 })
            }
            async let first: Void = sessions[1].pickUp(2)
            async let second: Void = sessions[2].pickUp(2)
            _ = try await (first, second)
            #expect(
                try await eventually {
                    let holders = try await [sessions[0].bubbles(), sessions[1].bubbles(), sessions[2].bubbles()]
                        .map { $0.bubbles[2].holder }
                    return holders[0] != nil && Set(holders).count == 1
                })
            let holder = try await sessions[0].bubbles().bubbles[2].holder
            #expect(holder == PeerID(2) || holder == PeerID(3))
            await stopAll(sessions)
        }
    }

    @Test("a peer of another session is refused with the reason")
    func wrongSession() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2, session: "other")
        let eventsA = EventRecorder(a)
        let eventsB = EventRecorder(b)
        try await mesh([a, b])
        #expect(
            await eventsA.wait { events in
                events.contains { if case .declined(PeerID(2), _, .wrongSession) = $0 { true } else { false } }
            })
        #expect(
            await eventsB.wait { events in
                events.contains { if case .declined(PeerID(1), _, .wrongSession) = $0 { true } else { false } }
            })
        #expect(try await a.connectedPeers().isEmpty)
        await stopAll([a, b])
    }

    @Test("a full session declines with the reason")
    func full() async throws {
        let a = try makeSession(1, maxPeers: 1)
        let b = try makeSession(2)
        let c = try makeSession(3)
        let eventsC = EventRecorder(c)
        try await mesh([a, b])
        #expect(try await eventually { try await a.connectedPeers().count == 1 })
        try await c.start()
        try await c.connect(to: await a.endpoint)
        #expect(
            await eventsC.wait { events in
                events.contains { if case .declined(PeerID(1), _, .full) = $0 { true } else { false } }
            })
        await stopAll([a, b, c])
    }

    @Test("an invitation can be declined by the invitee's decision")
    func declinedInvitation() async throws {
        let a = try makeSession(1, policy: .ask)
        let b = try makeSession(2)
        let eventsA = EventRecorder(a)
        let eventsB = EventRecorder(b)
        try await a.start()
        try await b.start()
        try await b.connect(to: await a.endpoint)
        #expect(
            await eventsA.wait { events in
                events.contains { if case .invitation = $0 { true } else { false } }
            })
        let pending = try await a.invitations()
        #expect(pending.map(\.peerID) == [PeerID(2)])
        #expect(try await a.answer(pending[0].id, accept: false, reason: .rejected))
        #expect(
            await eventsB.wait { events in
                events.contains { if case .declined(PeerID(1), _, .rejected) = $0 { true } else { false } }
            })
        #expect(try await a.invitations().isEmpty, "no stale invitation")
        await stopAll([a, b])
    }
}
