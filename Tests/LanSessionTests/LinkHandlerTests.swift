import NIOCore
import NIOEmbedded
import TestSupport
import Testing
import WireCodec

@testable import LanSession

/// The pipeline of a link (the link handler framing what it reads) wired to a session core, on an embedded channel:
/// frames in, frames out, no sockets and no sleeps.
@Suite("LinkHandler on an EmbeddedChannel")
struct LinkHandlerTests {
    let remote = PeerID(77)

    /// A link whose peer completed the handshake and answered the activation; what was written is read.
    func connectedLink() throws -> (EmbeddedCore, EmbeddedChannel) {
        let embedded = try EmbeddedCore()
        let channel = try embedded.acceptedLink()
        try embedded.send(
            .hello(Hello(peerID: remote, incarnation: 5, displayName: "raw", sessionName: "s")), on: channel)
        try embedded.send(.invitation(Invitation()), on: channel)
        try embedded.send(.resume(Resume(received: 0, nextSequence: 1)), on: channel)
        _ = try embedded.written(channel)
        return (embedded, channel)
    }

    @Test("hello, invitation, accept and the leader's resume; after the peer's answer its commands are applied")
    func handshakeAndCommands() throws {
        let embedded = try EmbeddedCore()
        let channel = try embedded.acceptedLink()
        guard case .hello(let hello)? = try embedded.written(channel).first else {
            Issue.record("the link did not open with a hello")
            return
        }
        #expect(hello.peerID == PeerID(1))
        try embedded.send(
            .hello(Hello(peerID: remote, incarnation: 5, displayName: "raw", sessionName: "s")), on: channel)
        try embedded.send(.invitation(Invitation()), on: channel)
        let answer = try embedded.written(channel).filter { $0.kind != .ping }  // a first ping measures the round trip
        // Accepted, and as the lower peer id this side activates the link at once.
        #expect(answer.map(\.kind) == [.accept, .resume])
        #expect(answer.last == .resume(Resume(received: 0, nextSequence: 1)))
        #expect(embedded.info(remote)?.state == .connecting)
        try embedded.send(.resume(Resume(received: 0, nextSequence: 1)), on: channel)
        let info = try #require(embedded.info(remote))
        #expect(info.state == .connected)
        #expect(info.links.map(\.state) == [.active])
        #expect(info.address == "10.0.0.7:40000")
        try embedded.send(.counterIncrement(count: 3), on: channel)
        #expect(embedded.increments == [3])
        // The peer's link is not one a redial would use: its address with the port it does not announce is unknown.
        #expect(info.endpoints.isEmpty)
    }

    @Test("bytes read while a read is being framed follow it: nothing is reordered or lost")
    func readsWithinARead() throws {
        // NIO reads again from within a read when a write the core makes fails: it drains the socket before it closes
        // it. The recorder makes such a read while it handles the increment of 1, with the rest of a frame that the
        // first read holds half of.
        let (embedded, channel) = try connectedLink()
        let frames = try (1...4).map { try StreamFraming.encode(.counterIncrement(count: UInt64($0))) }
        let split = frames[1].count / 2
        embedded.recorder.onMessage = { message in
            guard message == .counterIncrement(count: 1) else { return }
            let later = Array(frames[1][split...]) + frames[2]
            channel.pipeline.syncOperations.fireChannelRead(NIOAny(ByteBuffer(bytes: later)))
        }
        try channel.writeInbound(ByteBuffer(bytes: frames[0] + frames[1][..<split]))
        #expect(embedded.increments == [1, 2, 3])
        try embedded.send(.counterIncrement(count: 4), on: channel)
        #expect(embedded.increments == [1, 2, 3, 4])
        // All four were counted as sequenced, once each: the next acknowledgement says so.
        _ = try embedded.written(channel)
        embedded.core.tick()
        #expect(try embedded.written(channel).contains(.ack(sequence: 4)))
    }

    @Test("a ping is answered by its pong; one without a pong fails once it is 2 s overdue, with no task of its own")
    func pingsAndTheirTimeout() throws {
        let (embedded, channel) = try connectedLink()

        let answered = embedded.components.sender.ping(remote, unreliable: false)
        guard case .ping(let ping)? = try embedded.written(channel).last else {
            Issue.record("no ping was written")
            return
        }
        try embedded.send(.pong(ping), on: channel)
        #expect(try answered.wait() >= .zero)

        let unanswered = embedded.components.sender.ping(remote, unreliable: false)
        var settled = false
        unanswered.assumeIsolated().whenComplete { _ in settled = true }
        _ = try embedded.written(channel)
        embedded.components.pings.expire(now: .now() + .seconds(1))
        embedded.loop.run()
        #expect(!settled, "not overdue yet")
        embedded.components.pings.expire(now: .now() + .seconds(3))
        #expect(throws: SessionError.self) { try unanswered.wait() }
    }

    @Test("a malformed frame closes that link with its peer's record settled; nothing reaches the application")
    func malformedFrame() throws {
        let embedded = try EmbeddedCore()
        let channel = try embedded.acceptedLink()
        _ = try embedded.written(channel)
        try embedded.send(
            .hello(Hello(peerID: remote, incarnation: 5, displayName: "raw", sessionName: "s")), on: channel)
        try channel.writeInbound(ByteBuffer(bytes: [0x02, 0x99, 0x00]))  // kind 0x99 does not exist
        #expect(!channel.isActive)
        // It never completed a handshake: nothing of it is kept.
        #expect(embedded.components.reporter.peerInfos().isEmpty)
        #expect(embedded.recorder.calls.isEmpty)
    }

    @Test("a command before the handshake is a protocol error: bye, then closed")
    func commandBeforeHandshake() throws {
        let embedded = try EmbeddedCore()
        let channel = try embedded.acceptedLink()
        _ = try embedded.written(channel)
        try embedded.send(.counterIncrement(count: 1), on: channel)
        #expect(try embedded.written(channel) == [.bye(.protocolError)])
        #expect(!channel.isActive)
        #expect(embedded.recorder.calls.isEmpty)
    }

    @Test("a command whose body its application finds malformed closes the link without a bye, as a malformed frame")
    func malformedForItsApplication() throws {
        let (embedded, channel) = try connectedLink()
        embedded.recorder.check = { message throws(WireError) in
            if message.incrementCount == 0 { throw WireError(.valueOutOfRange, detail: "increment count 0") }
        }
        try embedded.send(.counterIncrement(count: 2), on: channel)
        #expect(embedded.increments == [2])
        try embedded.send(.application(ApplicationMessage(kind: 0x27, body: [0x00])), on: channel)
        #expect(try embedded.written(channel).allSatisfy { $0.kind != .bye })
        #expect(!channel.isActive)
        #expect(embedded.increments == [2])
    }
}
