import NIOCore
import WireCodec

/// Sequencing of the reliable channel with one peer, across links: numbers, acknowledgements, resend on resume.
///
/// A plain value, driven by the session; it does no I/O.
struct ReliableChannel {
    /// Sequence number the next sequenced message will take.
    private(set) var nextSequence: UInt64 = 1
    /// Highest sequence number received from the peer.
    private(set) var received: UInt64 = 0
    /// Highest sequence number acknowledged to the peer.
    private(set) var acknowledged: UInt64 = 0
    /// Unacknowledged frames sent to the peer.
    private(set) var replay: ReplayBuffer
    /// Whether the replay buffer overflowed since the last resume: the peer must be re-synchronised.
    private(set) var mustResynchronise = false

    init(maxMessages: Int, maxBytes: Int) {
        replay = ReplayBuffer(maxMessages: maxMessages, maxBytes: maxBytes)
    }

    /// Numbers an outgoing sequenced message and keeps its frame for resending. Returns the frame to write (a slice of
    /// the replay buffer), or nil with `overflowed` when the replay buffer overflowed and did not keep it.
    mutating func send(_ message: Message) throws(WireError) -> (frame: ByteBuffer?, overflowed: Bool) {
        let sequence = nextSequence
        let frame = try replay.append(message, sequence: sequence)
        nextSequence += 1
        if frame == nil { mustResynchronise = true }
        return (frame, frame == nil)
    }

    /// Bytes kept for resending (sent and not acknowledged).
    var replayBytes: Int { replay.frames.readableBytes }

    /// Whether `bytes` more in `messages` more frames fit the replay buffer.
    func hasRoom(bytes: Int, messages: Int) -> Bool {
        replay.count + messages <= replay.maxMessages && replay.frames.readableBytes + bytes <= replay.maxBytes
    }

    /// Counts a sequenced message received from the peer; returns its number.
    mutating func receive() -> UInt64 {
        received += 1
        return received
    }

    /// Whether an ack is due: some messages were received since the last one.
    var ackDue: Bool { received > acknowledged }

    /// Records that `ack(received)` is being sent; returns the number to send.
    mutating func makeAck() -> UInt64 {
        acknowledged = received
        return received
    }

    /// The peer acknowledged everything up to `sequence`.
    mutating func peerAcknowledged(_ sequence: UInt64) {
        replay.acknowledge(upTo: min(sequence, nextSequence - 1))
    }

    /// What this side says in `resume`; it acknowledges everything received so far.
    mutating func makeResume() -> Resume {
        acknowledged = received
        return Resume(received: received, nextSequence: replay.count > 0 ? replay.firstSequence : nextSequence)
    }

    /// What to do once the peer's `resume` arrived.
    enum ResumeOutcome: Equatable {
        /// Resend these frames (possibly none); numbering goes on.
        case resend(ByteBuffer)
        /// Messages from the peer were lost (it overflowed): `lost` of them. Numbering jumps; re-synchronise.
        case gap(lost: UInt64, resend: ByteBuffer)
    }

    /// Applies the peer's `resume`: what it received from us tells what to resend; what it will send next tells
    /// whether we missed messages for good.
    mutating func peerResumed(_ peer: Resume) -> ResumeOutcome {
        replay.acknowledge(upTo: min(peer.received, nextSequence - 1))
        // Frames the peer missed that are no longer kept were announced as a gap by our own resume (its
        // `nextSequence` is the oldest frame kept): resend from there.
        let from = replay.count > 0 ? max(peer.received, replay.firstSequence - 1) : peer.received
        let resend = replay.frames(after: from) ?? ByteBuffer()
        mustResynchronise = false
        if peer.nextSequence > received + 1 {
            let lost = peer.nextSequence - received - 1
            received = peer.nextSequence - 1
            return .gap(lost: lost, resend: resend)
        }
        return .resend(resend)
    }

    /// The peer restarted (new incarnation): both directions start over.
    mutating func peerRestarted() {
        nextSequence = 1
        received = 0
        acknowledged = 0
        replay.reset(nextSequence: 1)
        mustResynchronise = false
    }
}
