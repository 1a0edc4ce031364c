import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// Which members take a seat of `maxPeers` (docs/wire-format.md, section 11.2), with a core on an embedded loop.
@Suite("Seats of maxPeers")
struct SeatTests {
    /// `peer` dials in from `address` and invites; returns its link and what the core answered.
    func invite(_ embedded: EmbeddedCore, _ peer: UInt64, from address: String) throws -> (EmbeddedChannel, [Message]) {
        let channel = try embedded.acceptedLink(from: address)
        _ = try embedded.written(channel)  // the core's hello
        try embedded.send(
            .hello(Hello(peerID: PeerID(peer), incarnation: 5, displayName: "p\(peer)", sessionName: "s")), on: channel)
        try embedded.send(.invitation(Invitation()), on: channel)
        return (channel, try embedded.written(channel))
    }

    @Test("a lost member keeps its seat and comes back whatever the seats; one that left gives its seat back")
    func seats() throws {
        let embedded = try EmbeddedCore { $0.maxPeers = 1 }
        let (first, answer) = try invite(embedded, 2, from: "10.0.0.2")
        #expect(answer.first?.kind == .accept)
        try embedded.send(.resume(Resume(received: 0, nextSequence: 1)), on: first)
        #expect(embedded.info(PeerID(2))?.state == .connected)
        // Its link breaks: it is lost, not gone, and keeps its seat.
        try first.close().wait()
        embedded.loop.run()
        #expect(embedded.info(PeerID(2))?.state != .connected)
        let (_, full) = try invite(embedded, 3, from: "10.0.0.3")
        #expect(full == [.decline(.full)])
        // It comes back: a member, accepted although every seat is taken.
        let (back, again) = try invite(embedded, 2, from: "10.0.0.2")
        #expect(again.first?.kind == .accept)
        // It leaves: its seat is free for the next one.
        try embedded.send(.bye(.leaving), on: back)
        let (_, welcome) = try invite(embedded, 4, from: "10.0.0.4")
        #expect(welcome.first?.kind == .accept)
        // Peer 4 takes the seat from its accept on, before its link is active: peer 3 is still refused.
        let (_, stillFull) = try invite(embedded, 3, from: "10.0.0.3")
        #expect(stillFull == [.decline(.full)])
    }
}
