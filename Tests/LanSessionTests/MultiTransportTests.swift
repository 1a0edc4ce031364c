@_spi(Diagnostics) import LanSession
import NIOCore
import NIOPosix
import TestSupport
import Testing
import WireCodec

/// A second transport for tests: TCP on loopback under another name and port, without datagrams — as Bluetooth
/// RFCOMM will be. It is one small type conforming to `Transport`, which is all a transport takes.
struct AlternateTransport: Transport {
    let name: String
    let port: Int

    var carriesDatagrams: Bool { false }

    func listen(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<(channel: any Channel, port: Int)> {
        ServerBootstrap(group: loop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer(initializer)
            .bind(host: "127.0.0.1", port: self.port)
            .map { channel in (channel, channel.localAddress?.port ?? self.port) }
    }

    func connect(
        to endpoint: Endpoint, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        ClientBootstrap(group: loop).channelInitializer(initializer).connect(host: endpoint.host, port: endpoint.port)
    }

    func openDatagrams(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        loop.makeFailedFuture(SessionError(.io, "\(name) carries no datagrams"))
    }
}

@Suite("Several transports over loopback", .serialized)
struct MultiTransportTests {
    func session(_ id: UInt64, alternatePort: Int = 0) throws -> Session {
        var configuration = SessionConfiguration(
            peerID: PeerID(id), displayName: "peer-\(id)", sessionName: "test", host: "127.0.0.1")
        configuration.transportPriority = ["lan", "alt"]
        configuration.admission = .open
        configuration.isInsecure = true  // numbered peer ids
        configuration.pathHysteresis = .milliseconds(500)
        return try Session(
            configuration: configuration,
            transports: [LANTransport(), AlternateTransport(name: "alt", port: alternatePort)])
    }

    func links(_ session: Session, to peer: PeerID) async throws -> [LinkInfo] {
        try await session.peers().first { $0.peerID == peer }?.links ?? []
    }

    @Test("a link per transport; the preferred one active; when it breaks the other carries on, and it comes back")
    func failoverBothWays() async throws {
        let a = try session(1)
        let b = try session(2)
        let eventsB = EventRecorder(b)
        try await a.start()
        try await b.start()
        let alternateB = try #require(await b.listeningEndpoints.first { $0.transport == "alt" })
        try await a.connect(to: await b.endpoint)
        try await a.connect(to: alternateB)
        let both = try await waitUntil {
            let seen = try await links(a, to: b.peerID)
            return seen.map(\.state) == [.active, .standby] && seen.first?.transport == "lan"
        }
        let initial = try await links(a, to: b.peerID)
        #expect(both, "links: \(initial)")

        // The LAN link breaks while a sends: the alternate transport takes over, then LAN comes back and, once it
        // has proved itself, takes the traffic again.
        for round in 0..<3 {
            for index in 0..<500 { try await a.send(number(round * 1_000 + index)) }
            try await a.dropLink(to: b.peerID)
            for index in 500..<1_000 { try await a.send(number(round * 1_000 + index)) }
            let movedBack = try await waitUntil(.seconds(5)) {
                let seen = try await links(a, to: b.peerID)
                return seen.first?.transport == "lan" && seen.first?.state == .active && seen.count == 2
            }
            let now = try await links(a, to: b.peerID)
            #expect(movedBack, "round \(round): \(now)")
        }
        #expect(await eventsB.wait { numbers(in: $0, from: a.peerID).count >= 3_000 })
        #expect(numbers(in: eventsB.events, from: a.peerID) == Array(0..<3_000), "exactly once, in order")
        #expect(!eventsB.events.contains(.peerLost(a.peerID)), "b never lost a: another path was always there")
        let alternateActive = eventsB.events.contains {
            if case .linkChanged(PeerID(1), let link) = $0 {
                link.transport == "alt" && link.state == .active
            } else {
                false
            }
        }
        #expect(alternateActive, "the alternate transport carried traffic at some point")
        await stopAll([a, b])
    }
}
