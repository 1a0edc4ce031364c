import NIOCore
import WireCodec

/// The frames of sequenced messages sent to one peer and not yet acknowledged, kept to resend after a reconnect.
///
/// Frames are stored back to back in one buffer (they delimit themselves with their length prefix), so appending
/// allocates nothing once the buffer has grown, and a replay is one write of a slice. A frame it keeps is never dropped
/// before the peer acknowledges it. It is bounded in messages and bytes for *state* (a message its application can
/// send again whole, such as a count): a state frame that would pass either bound is refused, before it takes a
/// number, and the application re-synchronises the peer once there is room. Payloads (data, stream chunks and the
/// streams' own messages) are never refused: they wait for room before they come (``StreamMultiplexer``), so only the
/// streams' few control messages may pass the bounds, by a little.
struct ReplayBuffer {
    /// Most frames kept.
    let maxMessages: Int
    /// Most bytes kept.
    let maxBytes: Int
    /// The frames, oldest first.
    private(set) var frames: ByteBuffer
    /// Sequence number of the oldest frame kept (when `count > 0`).
    private(set) var firstSequence: UInt64 = 1
    /// Frames kept.
    private(set) var count = 0

    init(maxMessages: Int, maxBytes: Int, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        precondition(maxMessages > 0 && maxBytes > 0)
        self.maxMessages = maxMessages
        self.maxBytes = maxBytes
        self.frames = allocator.buffer(capacity: min(maxBytes, 4096))
    }

    /// Encodes `message` straight into the buffer as message number `sequence` and returns the frame as a slice of
    /// the buffer (no copy, no allocation once the buffer has grown); nil, and nothing kept, for a state message
    /// (`refusable`) that does not fit the bounds.
    mutating func append(_ message: Message, sequence: UInt64, refusable: Bool) throws(WireError) -> ByteBuffer? {
        let size = try StreamFraming.frameSize(of: message)
        if refusable, !hasRoom(bytes: size, messages: 1) { return nil }
        if count == 0 { firstSequence = sequence }
        precondition(sequence == firstSequence + UInt64(count), "sequence \(sequence) does not follow the last one")
        let start = frames.writerIndex
        try frames.writeFrame(message)
        count += 1
        return frames.getSlice(at: start, length: size)
    }

    /// Writes a `data` frame for `payload` straight into the buffer as message number `sequence` (the payload's one
    /// copy) and returns the frame as a slice of the buffer. A payload is never refused: it waited for room before.
    mutating func appendData(_ payload: ByteBuffer, sequence: UInt64) throws(WireError) -> ByteBuffer {
        let length = payload.readableBytes
        let header = StreamFraming.dataFrameHeaderSize(payloadLength: length)
        if count == 0 { firstSequence = sequence }
        precondition(sequence == firstSequence + UInt64(count), "sequence \(sequence) does not follow the last one")
        let start = frames.writerIndex
        var failure: WireError?
        frames.writeWithUnsafeMutableBytes(minimumWritableBytes: header + length) { raw in
            do throws(WireError) {
                try StreamFraming.writeDataFrameHeader(payloadLength: length, into: raw)
            } catch {
                failure = error
                return 0
            }
            payload.withUnsafeReadableBytes { bytes in
                UnsafeMutableRawBufferPointer(rebasing: raw[header...]).copyMemory(from: bytes)
            }
            return header + length
        }
        if let failure { throw failure }
        count += 1
        return frames.getSlice(at: start, length: header + length)!
    }

    /// Whether `bytes` more in `messages` more frames fit the bounds.
    func hasRoom(bytes: Int, messages: Int) -> Bool {
        count + messages <= maxMessages && frames.readableBytes + bytes <= maxBytes
    }

    /// Whether at most half of each bound is taken: room enough to send the state of an application again.
    var isHalfEmpty: Bool { count <= maxMessages / 2 && frames.readableBytes <= maxBytes / 2 }

    /// Forgets every frame up to and including `sequence`.
    mutating func acknowledge(upTo sequence: UInt64) {
        guard count > 0, sequence >= firstSequence else { return }
        let acknowledged = Int(min(sequence - firstSequence + 1, UInt64(count)))
        for _ in 0..<acknowledged { skipFrame() }
        count -= acknowledged
        firstSequence += UInt64(acknowledged)
        if count == 0 {
            frames.clear()
        } else if frames.readerIndex > frames.capacity / 2 {
            frames.discardReadBytes()
        }
    }

    /// The frames after `sequence`, to resend; nil when some of them are no longer kept.
    func frames(after sequence: UInt64) -> ByteBuffer? {
        let wanted = sequence + 1
        if count == 0 { return wanted >= firstSequence ? ByteBuffer() : nil }
        guard wanted >= firstSequence else { return nil }
        var rest = frames
        for _ in 0..<Int(min(wanted - firstSequence, UInt64(count))) {
            Self.skipFrame(in: &rest)
        }
        return rest
    }

    /// Drops everything, for a peer that restarted.
    mutating func reset(nextSequence: UInt64) {
        frames.clear()
        count = 0
        firstSequence = nextSequence
    }

    private mutating func skipFrame() {
        Self.skipFrame(in: &frames)
    }

    private static func skipFrame(in buffer: inout ByteBuffer) {
        // Frames were written by this process, so their headers are well formed and within the absolute limit.
        let limits = WireLimits(maxFrameLength: Wire.absoluteMaxFrameLength)
        let header = buffer.withUnsafeReadableBytes { try? StreamFraming.decodeHeader($0, limits: limits) }
        guard let (headerLength, bodyLength) = header ?? nil else {
            preconditionFailure("replay buffer holds a malformed frame")
        }
        buffer.moveReaderIndex(forwardBy: headerLength + bodyLength)
    }
}
