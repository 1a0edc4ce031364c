import NIOCore
import Testing
import WireCodec

@testable import LanSession

@Suite("ReliableChannel")
struct ReliableChannelTests {
    @Test("numbers messages, acknowledges and resumes where the peer stopped")
    func resume() {
        var sender = ReliableChannel(maxMessages: 100, maxBytes: 10_000)
        var receiver = ReliableChannel(maxMessages: 100, maxBytes: 10_000)
        for delta in 1...5 {
            let frame = try! sender.send(.counterIncrement(count: UInt64(delta)), as: .state)
            #expect(frame.map { ReplayBufferTests.counts(in: $0) } == [UInt64(delta)])
        }
        // The receiver got three before the link broke.
        for _ in 0..<3 { _ = receiver.receive() }
        #expect(receiver.ackDue)
        let outcome = sender.peerResumed(receiver.makeResume())
        guard case .resend(let frames) = outcome else {
            Issue.record("expected a plain resend, got \(outcome)")
            return
        }
        #expect(ReplayBufferTests.counts(in: frames) == [4, 5])
        #expect(!receiver.ackDue)
        // The sender's own resume tells the receiver nothing is missing.
        let senderResume = sender.makeResume()
        let back = receiver.peerResumed(senderResume)
        #expect(back == .resend(ByteBuffer()))
    }

    @Test("a full buffer refuses state, unnumbered, until half empty; payloads are numbered and kept; no gap")
    func refusedStateNoGap() {
        var sender = ReliableChannel(maxMessages: 4, maxBytes: 10_000)
        var receiver = ReliableChannel(maxMessages: 4, maxBytes: 10_000)
        var refused = 0
        for delta in 1...6 where (try! sender.send(.counterIncrement(count: UInt64(delta)), as: .state)) == nil {
            refused += 1
        }
        #expect(refused == 2)
        #expect(sender.mustResynchronise)
        #expect(sender.nextSequence == 5, "refused messages take no number")
        let payload = try! sender.send(.data([9]), as: .payload)
        #expect(payload != nil, "a payload is never refused")
        let ahead = sender.nextSequence
        let held = try! sender.send(.counterIncrement(count: 99), as: .state)
        #expect(held == nil, "state waits for the resync")
        #expect(sender.nextSequence == ahead)
        let early = sender.takeResynchronisation()
        #expect(!early, "not before the buffer empties to half")
        // The receiver got three before the link broke; resume: no gap, the rest is resent.
        for _ in 0..<3 { _ = receiver.receive() }
        let back = receiver.peerResumed(sender.makeResume())
        #expect(back == .resend(ByteBuffer()))
        guard case .resend(let frames) = sender.peerResumed(receiver.makeResume()) else {
            Issue.record("expected a plain resend")
            return
        }
        #expect(ReplayBufferTests.counts(in: frames) == [4], "then the payload")
        let due = sender.takeResynchronisation()
        let again = sender.takeResynchronisation()
        #expect(due, "half empty: the applications send their state again")
        #expect(!again, "once")
        let after = try! sender.send(.counterIncrement(count: 7), as: .state)
        #expect(after != nil)
    }

    @Test("a sender that dropped numbered frames (the wire allows it) leaves a gap the receiver jumps")
    func gap() {
        var receiver = ReliableChannel(maxMessages: 2, maxBytes: 10_000)
        let outcome = receiver.peerResumed(Resume(received: 0, nextSequence: 6))
        #expect(outcome == .gap(lost: 5, resend: ByteBuffer()))
        #expect(receiver.received == 5)
    }

    @Test("a restarted peer starts both directions over")
    func restart() {
        var channel = ReliableChannel(maxMessages: 10, maxBytes: 10_000)
        _ = try! channel.send(.counterIncrement(count: 1), as: .state)
        _ = channel.receive()
        _ = channel.peerRestarted()
        #expect(channel.received == 0)
        _ = try! channel.send(.counterIncrement(count: 1), as: .state)
        #expect(channel.nextSequence == 2, "numbering started over")
    }

    @Test("at a restart, data never written goes to the new incarnation; data written and not acknowledged is in doubt")
    func restartCarriesUnsentData() {
        var channel = ReliableChannel(maxMessages: 100, maxBytes: 10_000)
        _ = try! channel.send(.data([1]), as: .payload)
        _ = try! channel.send(.counterIncrement(count: 1), as: .state)
        _ = try! channel.send(.data([2]), as: .payload)
        channel.wroteAll()  // on a link: 1...3
        channel.peerAcknowledged(1)
        _ = try! channel.send(.data([3]), as: .payload)  // the link went: kept, never written
        _ = try! channel.send(.counterIncrement(count: 2), as: .state)
        let (unsent, inDoubt) = channel.peerRestarted()
        #expect(
            unsent.map { Array($0.payload.readableBytesView) } == [[3]],
            "state is sent again by its application; data never written is carried")
        #expect(inDoubt == 1, "data [2] was written and not acknowledged")
        #expect(channel.nextSequence == 1 && channel.written == 0)
    }
}
