import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// Invitations both ways, with their deadlines on an embedded loop.
@Suite("Invitations")
struct InvitationsTests {
    let loop = EmbeddedEventLoop()

    func link() throws -> Link {
        let channel = EmbeddedChannel(loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "10.0.0.7", port: 40_000)).wait()
        return Link(
            channel: channel, role: .acceptor, transport: LANTransport(), endpoint: nil, intendedPeer: nil,
            liveness: Liveness(heartbeatInterval: .milliseconds(250), timeout: .seconds(2), now: .now()))
    }

    @Test("an invitation from a peer waits for an answer, is taken once, and expires at its deadline")
    func fromPeers() throws {
        let invitations = Invitations(loop: loop)
        var expired: [UInt64] = []
        let link = try link()
        let first = invitations.ask(
            link: link, peer: PeerID(2), name: "two", context: [1], wait: .seconds(5)
        ) { expired.append($0) }
        let second = invitations.ask(
            link: link, peer: PeerID(3), name: "three", context: [], wait: .seconds(1)
        ) { expired.append($0) }
        #expect(invitations.requests.map(\.id) == [first.id, second.id])
        #expect(invitations.take(first.id)?.request == first)
        #expect(invitations.take(first.id) == nil, "answered once")
        loop.advanceTime(by: .seconds(1))
        #expect(expired == [second.id])
        invitations.drop(on: link)
        #expect(invitations.requests.isEmpty)
    }

    @Test("the application's invitation: answered once for every caller; it times out; a stop fails it")
    func fromTheApplication() throws {
        let invitations = Invitations(loop: loop)
        var timedOut = 0
        let first = loop.makePromise(of: Void.self)
        let second = loop.makePromise(of: Void.self)
        invitations.invite(PeerID(2), context: [9], timeout: .seconds(3), promise: first) { timedOut += 1 }
        invitations.invite(PeerID(2), context: [9], timeout: .seconds(3), promise: second) { timedOut += 1 }
        #expect(invitations.invitation(of: PeerID(2))?.context == [9])
        #expect(invitations.end(PeerID(2), nil))
        try first.futureResult.wait()
        try second.futureResult.wait()
        #expect(!invitations.end(PeerID(2), nil))

        let late = loop.makePromise(of: Void.self)
        invitations.invite(PeerID(3), context: [], timeout: .seconds(3), promise: late) { timedOut += 1 }
        loop.advanceTime(by: .seconds(3))
        #expect(timedOut == 1)
        invitations.stop(SessionError(.notRunning, "stopped"))
        #expect(throws: SessionError.self) { try late.futureResult.wait() }
    }
}
