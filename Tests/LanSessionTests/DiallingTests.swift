import LanSession
import NIOCore
import NIOPosix
import TestSupport
import Testing
import WireCodec

/// Endpoints per discovery record, and rounds of dials over every endpoint of a peer.
@Suite("Dialling over loopback", .serialized)
struct DiallingTests {
    /// A loopback port nothing listens on: bound, then closed.
    func deadEndpoint() async throws -> Endpoint {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        try await channel.close()
        return Endpoint(host: "127.0.0.1", port: port)
    }

    @Test("a record with a wrong address neither hides a peer's good one nor takes it away when it goes")
    func forgedRecord() async throws {
        // Only one dials: two knows nothing of one, so every link is one's doing.
        let one = try makeSession(1)
        let two = try makeSession(2)
        try await one.start()
        try await two.start()
        let dead = try await deadEndpoint()
        // The forged record sorts first and names two's id with a port nothing listens on.
        try await one.discovered([dead], peerID: two.peerID, name: "two", record: "a-forged")
        try await one.discovered([await two.endpoint], peerID: two.peerID, name: "two", record: "two")
        #expect(try await waitUntil { try await one.connectedPeers().count == 1 })
        var info = try await one.peers().first { $0.peerID == two.peerID }
        #expect(Set(info?.endpoints ?? []) == [dead, await two.endpoint])
        #expect(info?.endpoints.first == (await two.endpoint), "the endpoint that worked is tried first")

        // The forged record goes away: only what it gave goes with it.
        try await one.vanished(record: "a-forged")
        info = try await one.peers().first { $0.peerID == two.peerID }
        #expect(info?.endpoints == [await two.endpoint])
        try await one.dropLink(to: two.peerID)
        #expect(try await waitUntil { try await one.connectedPeers().count == 1 }, "one redials two")

        // Two's own record goes away too (mDNS broken, say) while the forged one is back: the endpoint a handshake
        // proved is still tried, the forged one fails, and one gets two back.
        try await one.vanished(record: "two")
        try await one.discovered([dead], peerID: two.peerID, name: "two", record: "a-forged")
        info = try await one.peers().first { $0.peerID == two.peerID }
        #expect(info?.endpoints == [await two.endpoint, dead])
        try await one.dropLink(to: two.peerID)
        #expect(try await waitUntil { try await one.connectedPeers().count == 1 }, "one redials two")
        await stopAll([one, two])
    }

    @Test("a dialled peer learns where its dialler listens from the hello, as an endpoint to redial")
    func acceptorLearnsEndpoint() async throws {
        let one = try makeSession(1)
        let two = try makeSession(2)
        try await one.start()
        try await two.start()
        try await one.discovered([await two.endpoint], peerID: two.peerID, name: "two", record: "two")
        #expect(try await waitUntil { try await two.connectedPeers().count == 1 })
        let proven = try await two.peers().first?.endpoints
        #expect(proven == [await one.endpoint], "two knows one's listening endpoint from its hello")
        await stopAll([one, two])
    }

    @Test("an endpoint that turns out to be another peer's does not end the round: the next one is dialled")
    func endpointOfAnotherPeer() async throws {
        let one = try makeSession(1)
        let two = try makeSession(2)
        let three = try makeSession(3)
        for session in [one, two, three] { try await session.start() }
        // A stale record says two is where three listens.
        try await one.discovered([await three.endpoint], peerID: two.peerID, name: "two", record: "a-stale")
        try await one.discovered([await two.endpoint], peerID: two.peerID, name: "two", record: "two")
        let linked = try await waitUntil {
            Set(try await one.connectedPeers().map(\.peerID)) == [two.peerID, three.peerID]
        }
        #expect(linked)
        await stopAll([one, two, three])
    }
}
