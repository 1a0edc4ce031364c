import Foundation
@_spi(Diagnostics) import LanSession
import NIOCore
import TestSupport
import Testing
import WireCodec

/// Whether each of two sessions has exactly one connected peer.
func bothConnected(_ a: Session, _ b: Session) async throws -> Bool {
    let atA = try await a.connectedPeers().count
    let atB = try await b.connectedPeers().count
    return atA == 1 && atB == 1
}

/// Index `index` as the bytes of a data message.
func number(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(index).littleEndian) { Array($0) } }

/// The numbers of the reliable data messages `peer` sent, in the order they arrived.
func numbers(in events: [SessionEvent], from peer: PeerID) -> [Int] {
    events.compactMap { event in
        guard case .data(peer, let bytes, true) = event, bytes.readableBytes == 4 else { return nil }
        return Int(bytes.getInteger(at: bytes.readerIndex, endianness: .little, as: UInt32.self)!)
    }
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
        #expect(try await a.member(named: "bob")?.peerID == PeerID(2))
        #expect(try await a.member(named: PeerID(2).description.uppercased())?.name == "bob")
        #expect(try await a.member(named: "carol") == nil)
        #expect(try await waitUntil { try await a.peers().first?.unreliable == .udp })
        #expect(try await waitUntil { try await a.peers().first?.rttMicros != nil })
        await stopAll([a, b])
    }

    @Test("a series of round trips measures each one, back to back, on either channel")
    func roundTripSeries() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        try await mesh([a, b])
        #expect(try await waitUntil { try await bothConnected(a, b) })
        #expect(try await waitUntil { try await a.peers().first?.unreliable == .udp })
        let reliable = try await a.measureRoundTrips(to: PeerID(2), count: 200)
        let unreliable = try await a.measureRoundTrips(to: PeerID(2), count: 200, unreliable: true, payloadSize: 64)
        #expect(reliable.count == 200 && unreliable.count == 200)
        #expect((reliable + unreliable).allSatisfy { $0 > .zero && $0 < .seconds(2) })
        await stopAll([a, b])
    }

    @Test("three peers form a mesh")
    func threePeers() async throws {
        let sessions = try [makeSession(30), makeSession(10), makeSession(20)]
        try await mesh(sessions)
        for session in sessions {
            #expect(try await waitUntil { try await session.connectedPeers().count == 2 })
        }
        await stopAll(sessions)
    }

    @Test("10,000 reliable messages arrive exactly once, in order")
    func tenThousandMessages() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        let received = EventRecorder(b)
        try await mesh([a, b])
        #expect(try await waitUntil { try await bothConnected(a, b) })
        for index in 0..<10_000 { try await a.send(number(index)) }
        #expect(await received.wait(timeout: .seconds(10)) { numbers(in: $0, from: PeerID(1)).count == 10_000 })
        #expect(numbers(in: received.events, from: PeerID(1)) == Array(0..<10_000))
        await stopAll([a, b])
    }

    @Test("a link cut mid-stream reconnects and resumes with nothing lost or duplicated")
    func cutAndResume() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        let eventsA = EventRecorder(a)
        let eventsB = EventRecorder(b)
        try await mesh([a, b])
        #expect(try await waitUntil { try await bothConnected(a, b) })
        for round in 0..<5 {
            for index in 0..<1_000 { try await a.send(number(round * 1_000 + index)) }
            if round < 4 { try await a.dropLink(to: PeerID(2)) }
            for index in 0..<1_000 { try await b.send(number(round * 1_000 + index)) }
        }
        #expect(
            await eventsB.wait(timeout: .seconds(15)) { numbers(in: $0, from: PeerID(1)).count >= 5_000 })
        #expect(
            await eventsA.wait(timeout: .seconds(15)) { numbers(in: $0, from: PeerID(2)).count >= 5_000 })
        #expect(numbers(in: eventsB.events, from: PeerID(1)) == Array(0..<5_000))
        #expect(numbers(in: eventsA.events, from: PeerID(2)) == Array(0..<5_000))
        let lost = eventsB.events.filter { if case .peerLost = $0 { true } else { false } }.count
        #expect(lost >= 1, "the cut was not noticed")
        #expect(try await waitUntil { try await b.connectedPeers().count == 1 })
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
            #expect(try await waitUntil { try await bothConnected(a, b) })
            // Until one of the two links closed on each side: the duplicate's end, not a time.
            #expect(
                try await waitUntil {
                    let (linksOfA, linksOfB) = (try await a.peers(), try await b.peers())
                    return linksOfA.map(\.links.count) == [1] && linksOfB.map(\.links.count) == [1]
                })
            #expect(try await a.connectedPeers().count == 1)
            #expect(try await b.connectedPeers().count == 1)
            let connects = eventsA.events.filter { if case .peerConnected = $0 { true } else { false } }.count
            let losses = eventsA.events.filter { if case .peerLost = $0 { true } else { false } }.count
            #expect(connects - losses == 1, "connected \(connects) times, lost \(losses)")
            #expect(losses == 0, "the surviving link flapped")
            await stopAll([a, b])
        }
    }

    @Test("without datagrams, unreliable messages fall back to the reliable link")
    func datagramFallback() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2, datagrams: false)
        let eventsB = EventRecorder(b)
        try await mesh([a, b])
        #expect(try await waitUntil { try await a.peers().first?.unreliable == .fallback })
        try await a.send([7, 8], mode: .unreliable)
        // It arrives on the reliable link, and says so.
        #expect(
            await eventsB.wait {
                $0.contains(.data(from: PeerID(1), bytes: ByteBuffer(bytes: [7, 8]), reliable: true))
            })
        await stopAll([a, b])
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
        #expect(try await waitUntil { try await a.connectedPeers().count == 1 })
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
