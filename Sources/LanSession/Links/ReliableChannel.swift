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
    /// Highest sequence number written on a link at least once (frames above it never left this process).
    private(set) var written: UInt64 = 0
    /// Unacknowledged frames sent to the peer.
    private(set) var replay: ReplayBuffer
    /// Whether state messages were refused (the replay buffer was full): until the peer is re-synchronised, every
    /// state message is, so that none arrives after a gap.
    private(set) var mustResynchronise = false

    init(maxMessages: Int, maxBytes: Int) {
        replay = ReplayBuffer(maxMessages: maxMessages, maxBytes: maxBytes)
    }

    /// What a sequenced message is to the channel.
    enum Content {
        /// State its application can send again whole (a count, a position): refused while the replay buffer is full,
        /// and the application asked for its state once there is room.
        case state
        /// A payload (data, a stream's chunk or control message): never refused, never dropped; it waited for room.
        case payload
    }

    /// Numbers an outgoing sequenced message and keeps its frame for resending. Returns the frame to write (a slice of
    /// the replay buffer), or nil when a state message is refused: it takes no number, is not sent, and the peer is
    /// to be re-synchronised (``takeResynchronisation()``).
    mutating func send(_ message: Message, as content: Content) throws(WireError) -> ByteBuffer? {
        guard content == .payload || !mustResynchronise else { return nil }
        guard let frame = try replay.append(message, sequence: nextSequence, refusable: content == .state) else {
            mustResynchronise = true
            return nil
        }
        nextSequence += 1
        return frame
    }

    /// Numbers a durable message and keeps its frame for resending; returns the frame. Never refused: payloads wait
    /// for room before they come.
    mutating func sendDurable(id: UInt64, payload: ByteBuffer) throws(WireError) -> ByteBuffer {
        let frame = try replay.appendDurable(id: id, payload: payload, sequence: nextSequence)
        nextSequence += 1
        return frame
    }

    /// Numbers an application's `data` payload and keeps it for resending (the buffer itself, not a copy); the link
    /// writes it as ``SequencedFrame/data(_:)``. Never refused: payloads wait for room before they come.
    mutating func sendData(_ payload: ByteBuffer) throws(WireError) {
        try replay.appendData(payload, sequence: nextSequence)
        nextSequence += 1
    }

    /// Whether the peer is due its applications' state again: messages were refused and the replay buffer has
    /// emptied to half since. Answers true once per refusal.
    mutating func takeResynchronisation() -> Bool {
        guard mustResynchronise, replay.isHalfEmpty else { return false }
        mustResynchronise = false
        return true
    }

    /// Every frame numbered so far was written on a link.
    mutating func wroteAll() {
        written = nextSequence - 1
    }

    /// The lowest sequence number the peer has not acknowledged (the next one when it acknowledged everything).
    var firstUnacknowledged: UInt64 { replay.count > 0 ? replay.firstSequence : nextSequence }

    /// Bytes kept for resending (sent and not acknowledged).
    var replayBytes: Int { replay.bytes }

    /// Whether `bytes` more in `messages` more frames fit the replay buffer.
    func hasRoom(bytes: Int, messages: Int) -> Bool {
        replay.hasRoom(bytes: bytes, messages: messages)
    }

    /// Counts a sequenced message received from the peer; returns its number.
    mutating func receive() -> UInt64 {
        received += 1
        return received
    }

    /// Whether an ack is due: some messages were received since the last one.
    var ackDue: Bool { received > acknowledged }

    /// Messages received since the last acknowledgement.
    var receivedSinceAck: UInt64 { received - acknowledged }

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
        /// Messages from the peer were lost: `lost` of them. Numbering jumps; re-synchronise. (This implementation never
        /// drops a numbered frame, but the wire format lets a sender do so; releases before 0.14 did.)
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
        if peer.nextSequence > received + 1 {
            let lost = peer.nextSequence - received - 1
            received = peer.nextSequence - 1
            return .gap(lost: lost, resend: resend)
        }
        return .resend(resend)
    }

    /// The peer restarted (new incarnation): both directions start over. Returns the `data` messages kept for it that
    /// never left this process (its old incarnation cannot have had them), to send to the new one, and how many data
    /// messages were written but not acknowledged (the old incarnation may or may not have delivered them).
    mutating func peerRestarted() -> (unsent: [(sequence: UInt64, payload: ByteBuffer)], inDoubt: Int) {
        var unsent: [(sequence: UInt64, payload: ByteBuffer)] = []
        var inDoubt = 0
        let limits = WireLimits(maxFrameLength: Wire.absoluteMaxFrameLength)
        replay.forEachFrame { sequence, frame in
            let payload: ByteBuffer
            switch frame {
            case .data(let data):
                payload = data
            case .encoded(let bytes):
                // Frames were written by this process: each is whole and well formed.
                guard let data = bytes.withUnsafeReadableBytes({ StreamFraming.locateDataFrame($0, limits: limits) })
                else { return }
                payload = bytes.getSlice(at: bytes.readerIndex + data.payloadOffset, length: data.payloadLength)!
            }
            if sequence > written {
                unsent.append((sequence, payload))
            } else {
                inDoubt += 1
            }
        }
        nextSequence = 1
        received = 0
        acknowledged = 0
        written = 0
        replay.reset(nextSequence: 1)
        mustResynchronise = false
        return (unsent, inDoubt)
    }
}
