import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// Invitations both ways, with their deadlines on an embedded loop.
@Suite("Invitations")
struct InvitationsTests {
    let loop = EmbeddedEventLoop()

    /// Records what the component asks, with the invitee it is told of.
    final class Recorder: InvitationsDelegate {
        var invitee: Invitations.Invitee?
        var answers: [Invitations.Answer] = []
        var events: [SessionEvent] = []

        func invitee(on link: Link) -> Invitations.Invitee? { invitee }
        func carryOut(_ answer: Invitations.Answer, on link: Link) { answers.append(answer) }
        func emit(_ event: SessionEvent) { events.append(event) }
    }

    func invitations(_ policy: InvitationPolicy = .acceptAll, maxPeers: Int = 8) -> Invitations {
        let configuration = SessionConfiguration(
            peerID: PeerID(1), displayName: "one", sessionName: "s", host: "127.0.0.1", maxPeers: maxPeers,
            invitationPolicy: policy)
        return Invitations(loop: loop, admission: Admission(configuration: configuration))
    }

    func link() throws -> Link {
        let channel = EmbeddedChannel(loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "10.0.0.7", port: 40_000)).wait()
        return Link(
            channel: channel, role: .acceptor, transport: LANTransport(), endpoint: nil, intendedPeer: nil,
            liveness: Liveness(heartbeatInterval: .milliseconds(250), timeout: .seconds(2), now: .now()))
    }

    @Test("an invitation from a peer waits for an answer, is taken once, and expires at its deadline")
    func fromPeers() throws {
        let invitations = invitations()
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

    @Test("a peer's invitation is weighed as the admission says: accepted, refused when full, asked and answered")
    func weighed() throws {
        let recorder = Recorder()
        let open = invitations(maxPeers: 1)
        open.delegate = recorder
        let link = try link()
        open.consider(Invitation(), on: link)
        #expect(recorder.answers == [.drop("invitation from nobody")], "a link that is no peer's")
        recorder.invitee = Invitations.Invitee(peer: PeerID(2), name: "two", isMember: false, seatsTaken: 0)
        open.consider(Invitation(), on: link)
        recorder.invitee?.seatsTaken = 1
        open.consider(Invitation(), on: link)
        recorder.invitee?.isMember = true
        open.consider(Invitation(), on: link)
        #expect(recorder.answers.dropFirst() == [.accept, .refuse(.full, "the session is full (1 peers)"), .accept])

        let asking = invitations(.ask, maxPeers: 1)
        let asked = Recorder()
        asking.delegate = asked
        asked.invitee = Invitations.Invitee(peer: PeerID(2), name: "two", isMember: false, seatsTaken: 0)
        asking.consider(Invitation(context: [7]), on: link)
        asking.consider(Invitation(context: [8]), on: link)
        #expect(asked.answers.isEmpty && asked.events.count == 2, "each becomes an event")
        let (first, second) = (asking.requests[0], asking.requests[1])
        #expect(first.context == [7] && first.peerID == PeerID(2))
        asked.invitee?.seatsTaken = 1  // another took the last seat meanwhile
        #expect(asking.answer(first.id, decision: .accept))
        #expect(!asking.answer(first.id, decision: .accept), "answered once")
        #expect(asking.answer(second.id, decision: .decline(.rejected)))
        #expect(asked.answers == [.refuse(.full, "the session is full (1 peers)"), .decline(.rejected)])
        asked.invitee?.seatsTaken = 0
        asking.consider(Invitation(), on: link)
        loop.advanceTime(by: .seconds(60))
        #expect(asked.answers.last == .decline(.timedOut), "unanswered, it times out")
    }

    @Test("the application's invitation: answered once for every caller; it times out; a stop fails it")
    func fromTheApplication() throws {
        let invitations = invitations()
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
