import Logging
import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// The pipeline of a link (frame decoder, link handler) wired to a session core, on an embedded channel: frames in,
/// frames out, no sockets and no sleeps.
@Suite("LinkHandler on an EmbeddedChannel")
struct LinkHandlerTests {
    let remote = PeerID(77)

    /// A running core (its listeners are not needed here) and an accepted link to it, active.
    func acceptedLink() throws -> (SessionCore, EmbeddedChannel) {
        let loop = EmbeddedEventLoop()
        let core = SessionCore(
            configuration: SessionConfiguration(
                peerID: PeerID(1), displayName: "one", sessionName: "s", host: "127.0.0.1"), loop: loop,
            transports: [LANTransport()], logger: Logger(label: "test"), events: EventFanout())
        core.applications = [BubblesAndCounter(context: core)]
        core.runState = .running
        let channel = EmbeddedChannel(loop: loop)
        try core.setUpStream(channel, role: .acceptor, transport: LANTransport(), endpoint: nil, for: nil).wait()
        try channel.connect(to: SocketAddress(ipAddress: "10.0.0.7", port: 40_000)).wait()
        return (core, channel)
    }

    /// An accepted link whose peer completed the handshake and answered the activation; what was written is read.
    func connectedLink() throws -> (SessionCore, EmbeddedChannel) {
        let (core, channel) = try acceptedLink()
        try send(.hello(Hello(peerID: remote, incarnation: 5, displayName: "raw", sessionName: "s")), to: channel)
        try send(.invitation(Invitation()), to: channel)
        try send(.resume(Resume(received: 0, nextSequence: 1)), to: channel)
        _ = try written(channel)
        return (core, channel)
    }

    func send(_ message: Message, to channel: EmbeddedChannel) throws {
        try channel.writeInbound(ByteBuffer(bytes: try StreamFraming.encode(message)))
    }

    /// Every frame the link wrote so far, decoded.
    func written(_ channel: EmbeddedChannel) throws -> [Message] {
        var decoder = StreamDecoder()
        channel.embeddedEventLoop.run()  // small frames leave at the end of the loop's burst
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            decoder.append(contentsOf: Array(buffer.readableBytesView))
        }
        var messages: [Message] = []
        while let message = try decoder.next() { messages.append(message) }
        return messages
    }

    @Test("hello, invitation, accept and the leader's resume; after the peer's answer its commands are applied")
    func handshakeAndCommands() throws {
        let (core, channel) = try acceptedLink()
        guard case .hello(let hello)? = try written(channel).first else {
            Issue.record("the link did not open with a hello")
            return
        }
        #expect(hello.peerID == PeerID(1))
        try send(.hello(Hello(peerID: remote, incarnation: 5, displayName: "raw", sessionName: "s")), to: channel)
        try send(.invitation(Invitation()), to: channel)
        let answer = try written(channel).filter { $0.kind != .ping }  // a first ping measures the round trip
        // Accepted, and as the lower peer id this side activates the link at once.
        #expect(answer.map(\.kind) == [.accept, .resume])
        #expect(answer.last == .resume(Resume(received: 0, nextSequence: 1)))
        #expect(core.peers[remote]?.state == .connecting)
        try send(.resume(Resume(received: 0, nextSequence: 1)), to: channel)
        #expect(core.peers[remote]?.state == .connected)
        #expect(core.peers[remote]?.active?.path == PathKey(transport: "lan", address: "10.0.0.7"))
        try send(.counterIncrement(count: 3), to: channel)
        #expect(core.counter[remote] == 3)
        // The peer's link is the one a redial would use: its address with the port it does not announce is unknown.
        #expect(core.peers[remote]?.lastSucceeded.isEmpty == true)
    }

    @Test("a burst of messages leaves as its first frame at once and the rest in one buffer; a lone one at once")
    func burstsAreCoalesced() throws {
        let (core, channel) = try connectedLink()
        let peer = try #require(core.peers[remote])
        #expect(peer.state == .connected)

        // 100 messages in one burst (one task on the loop), as 100 increments arriving together would be.
        for count in 1...100 { core.sendSequenced(.counterIncrement(count: UInt64(count)), to: peer) }
        var buffers: [ByteBuffer] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { buffers.append(buffer) }
        #expect(buffers.count == 1, "only the burst's first frame leaves before the burst ends")
        channel.embeddedEventLoop.run()
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { buffers.append(buffer) }
        #expect(buffers.count == 2, "the other 99 leave together")
        var decoder = StreamDecoder()
        for buffer in buffers { decoder.append(contentsOf: Array(buffer.readableBytesView)) }
        var counts: [UInt64] = []
        while let message = try decoder.next() {
            if case .counterIncrement(let count) = message { counts.append(count) }
        }
        #expect(counts == Array(1...100), "all of them, in order")

        // The next burst starts afresh: its single message goes at once.
        core.sendSequenced(.counterIncrement(count: 101), to: peer)
        #expect(try channel.readOutbound(as: ByteBuffer.self) != nil)
    }

    @Test("bytes read while a read is being framed follow it: nothing is reordered or lost")
    func readsWithinARead() throws {
        // NIO reads again from within a read when a write the core makes fails: it drains the socket before it closes
        // it. The recorder makes such a read while it handles the increment of 1, with the rest of a frame that the
        // first read holds half of.
        let (core, channel) = try connectedLink()
        let frames = try (1...4).map { try StreamFraming.encode(.counterIncrement(count: UInt64($0))) }
        let split = frames[1].count / 2
        let recorder = IncrementRecorder()
        recorder.onIncrement = { count in
            guard count == 1 else { return }
            let later = Array(frames[1][split...]) + frames[2]
            channel.pipeline.syncOperations.fireChannelRead(NIOAny(ByteBuffer(bytes: later)))
        }
        core.applications = [recorder]
        try channel.writeInbound(ByteBuffer(bytes: frames[0] + frames[1][..<split]))
        #expect(recorder.counts == [1, 2, 3])
        try send(.counterIncrement(count: 4), to: channel)
        #expect(recorder.counts == [1, 2, 3, 4])
        #expect(core.peers[remote]?.reliable.received == 4)
    }

    @Test("a ping is answered by its pong; one without a pong fails once it is 2 s overdue, with no task of its own")
    func pingsAndTheirTimeout() throws {
        let (core, channel) = try connectedLink()

        let answered = core.ping(remote, unreliable: false)
        guard case .ping(let ping)? = try written(channel).last else {
            Issue.record("no ping was written")
            return
        }
        try send(.pong(ping), to: channel)
        #expect(try answered.wait() >= .zero)
        #expect(core.pendingPings.isEmpty)

        let unanswered = core.ping(remote, unreliable: false)
        _ = try written(channel)
        core.expirePings(now: .now() + .seconds(1))
        #expect(core.pendingPings.count == 1, "not overdue yet")
        core.expirePings(now: .now() + .seconds(3))
        #expect(core.pendingPings.isEmpty)
        #expect(throws: SessionError.self) { try unanswered.wait() }
    }

    @Test("a malformed frame closes that link with its peer's record settled; nothing reaches the counter")
    func malformedFrame() throws {
        let (core, channel) = try acceptedLink()
        _ = try written(channel)
        try send(.hello(Hello(peerID: remote, incarnation: 5, displayName: "raw", sessionName: "s")), to: channel)
        try channel.writeInbound(ByteBuffer(bytes: [0x02, 0x99, 0x00]))  // kind 0x99 does not exist
        #expect(!channel.isActive)
        #expect(core.links.isEmpty)
        #expect(core.peers[remote] == nil)  // it never completed a handshake: nothing of it is kept
        #expect(core.counter.total == 0)
    }

    @Test("a command before the handshake is a protocol error: bye, then closed")
    func commandBeforeHandshake() throws {
        let (core, channel) = try acceptedLink()
        _ = try written(channel)
        try send(.counterIncrement(count: 1), to: channel)
        #expect(try written(channel) == [.bye(.protocolError)])
        #expect(!channel.isActive)
        #expect(core.counter.total == 0)
    }
}

extension SessionCore {
    /// The counter of the original apps this core carries (tests attach them as `Session` does).
    var counter: GCounter {
        applications.compactMap { $0 as? BubblesAndCounter }.first?.counter ?? GCounter()
    }
}

/// Records the increments a core hands it, and calls `onIncrement` with each from within the core's handling.
final class IncrementRecorder: SessionApplication {
    var counts: [UInt64] = []
    var onIncrement: (UInt64) -> Void = { _ in }

    func handles(_ kind: MessageKind) -> Bool { kind == .counterIncrement }
    func received(_ message: Message, from peer: PeerID, reliably: Bool) {
        guard case .counterIncrement(let count) = message else { return }
        counts.append(count)
        onIncrement(count)
    }
    func peerConnected(_ peer: PeerID) {}
    func membershipChanged() {}
    func peerRestarted(_ peer: PeerID) {}
    func peerMissedMessages(_ peer: PeerID) {}
    func tick(now: NIODeadline) {}
    func describe(_ peer: PeerID, into info: inout PeerInfo) {}
}
