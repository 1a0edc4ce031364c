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
            let frame = try! sender.send(.counterIncrement(count: UInt64(delta))).frame
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

    @Test("after an overflow the receiver sees a gap, jumps ahead and re-synchronises")
    func gap() {
        var sender = ReliableChannel(maxMessages: 2, maxBytes: 10_000)
        var receiver = ReliableChannel(maxMessages: 2, maxBytes: 10_000)
        var overflowed = false
        for delta in 1...5 {
            overflowed = try! sender.send(.counterIncrement(count: UInt64(delta))).overflowed || overflowed
        }
        #expect(overflowed)
        #expect(sender.mustResynchronise)
        // Nothing was received; the sender can only offer what it kept.
        let senderResume = sender.makeResume()
        let outcome = receiver.peerResumed(senderResume)
        guard case .gap(let lost, _) = outcome else {
            Issue.record("expected a gap, got \(outcome)")
            return
        }
        #expect(lost == senderResume.nextSequence - 1)
        #expect(receiver.received == senderResume.nextSequence - 1)
        guard case .resend(let frames) = sender.peerResumed(Resume(received: 0, nextSequence: 1)) else {
            Issue.record("the sender resends what it kept")
            return
        }
        #expect(ReplayBufferTests.counts(in: frames) == [4, 5], "what was kept after the overflow")
        #expect(!sender.mustResynchronise)
    }

    @Test("a restarted peer starts both directions over")
    func restart() {
        var channel = ReliableChannel(maxMessages: 10, maxBytes: 10_000)
        _ = try! channel.send(.counterIncrement(count: 1))
        _ = channel.receive()
        channel.peerRestarted()
        #expect(channel.received == 0)
        _ = try! channel.send(.counterIncrement(count: 1))
        #expect(channel.nextSequence == 2, "numbering started over")
    }
}
