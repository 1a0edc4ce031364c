import NIOCore
import WireCodec

/// The frames of sequenced messages sent to one peer and not yet acknowledged, kept to resend after a reconnect.
///
/// An application's `data` payload is kept as the buffer it was given (a reference, not a copy: its frame's header is
/// written in front of it whenever it goes out, ``SequencedFrame/data(_:)``). Every other frame is encoded once into
/// one buffer, back to back (they delimit themselves with their length prefix), so that appending allocates nothing
/// once the buffer has grown. A frame it keeps is never dropped before the peer acknowledges it. It is bounded in
/// messages and bytes for *state* (a message its application can send again whole, such as a count): a state frame
/// that would pass either bound is refused, before it takes a number, and the application re-synchronises the peer once
/// there is room. Payloads (data, stream chunks and the streams' own messages) are never refused: they wait for room
/// before they come (``StreamMultiplexer``), so only the streams' few control messages may pass the bounds, by a
/// little.
struct ReplayBuffer {
    /// Most frames kept.
    let maxMessages: Int
    /// Most bytes kept (frames as on the wire).
    let maxBytes: Int
    /// The encoded frames, oldest first.
    private(set) var encoded: ByteBuffer
    /// Every frame kept, oldest first.
    private(set) var entries = CircularBuffer<Entry>(initialCapacity: 64)
    /// Sequence number of the oldest frame kept (when `count > 0`).
    private(set) var firstSequence: UInt64 = 1
    /// Bytes of the frames kept, as on the wire.
    private(set) var bytes = 0

    /// One kept frame.
    enum Entry {
        /// A frame of `length` bytes in ``encoded``.
        case encoded(length: Int)
        /// An application's `data` payload, held as it was given.
        case data(ByteBuffer)
    }

    init(maxMessages: Int, maxBytes: Int, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        precondition(maxMessages > 0 && maxBytes > 0)
        self.maxMessages = maxMessages
        self.maxBytes = maxBytes
        self.encoded = allocator.buffer(capacity: min(maxBytes, 4096))
    }

    /// Frames kept.
    var count: Int { entries.count }

    /// Encodes `message` straight into the buffer as message number `sequence` and returns the frame as a slice of
    /// the buffer (no copy, no allocation once the buffer has grown); nil, and nothing kept, for a state message
    /// (`refusable`) that does not fit the bounds.
    mutating func append(_ message: Message, sequence: UInt64, refusable: Bool) throws(WireError) -> ByteBuffer? {
        let size = try StreamFraming.frameSize(of: message)
        if refusable, !hasRoom(bytes: size, messages: 1) { return nil }
        follow(sequence)
        let start = encoded.writerIndex
        try encoded.writeFrame(message)
        entries.append(.encoded(length: size))
        bytes += size
        return encoded.getSlice(at: start, length: size)
    }

    /// Encodes a durable message numbered `id` straight into the buffer as message number `sequence`, its payload
    /// copied once from `payload`, and returns the frame as a slice of the buffer. A payload is never refused.
    ///
    /// - Throws: id 0, or a payload too long; nothing is kept then.
    mutating func appendDurable(id: UInt64, payload: ByteBuffer, sequence: UInt64) throws(WireError) -> ByteBuffer {
        let start = encoded.writerIndex
        do {
            try encoded.writeDurableFrame(id: id, payload: payload)
        } catch {
            encoded.moveWriterIndex(to: start)
            throw error
        }
        follow(sequence)
        let size = encoded.writerIndex - start
        entries.append(.encoded(length: size))
        bytes += size
        return encoded.getSlice(at: start, length: size)!
    }

    /// Keeps `payload` (the buffer itself: no copy) as the `data` frame of message number `sequence`. A payload is
    /// never refused: it waited for room before.
    ///
    /// - Throws: a payload too long for a `data` frame; nothing is kept then.
    /// A payload that is a small part of a much larger storage (a slice of a read buffer an application relays) is
    /// copied instead, so that what the bounds count is what is kept.
    mutating func appendData(_ payload: ByteBuffer, sequence: UInt64) throws(WireError) {
        let size = try Self.dataFrameSize(of: payload)
        follow(sequence)
        entries.append(.data(payload.storageCapacity > 2 * size + 4_096 ? ByteBuffer(buffer: payload) : payload))
        bytes += size
    }

    /// Bytes of `payload`'s `data` frame.
    static func dataFrameSize(of payload: ByteBuffer) throws(WireError) -> Int {
        let length = payload.readableBytes
        guard length <= Wire.maxDataLength else {
            throw WireError(.fieldTooLong, detail: "data is \(length) bytes, limit \(Wire.maxDataLength)")
        }
        return StreamFraming.dataFrameHeaderSize(payloadLength: length) + length
    }

    private mutating func follow(_ sequence: UInt64) {
        if count == 0 { firstSequence = sequence }
        precondition(sequence == firstSequence + UInt64(count), "sequence \(sequence) does not follow the last one")
    }

    /// Whether `bytes` more in `messages` more frames fit the bounds.
    func hasRoom(bytes more: Int, messages: Int) -> Bool {
        count + messages <= maxMessages && bytes + more <= maxBytes
    }

    /// Whether at most half of each bound is taken: room enough to send the state of an application again.
    var isHalfEmpty: Bool { count <= maxMessages / 2 && bytes <= maxBytes / 2 }

    /// Forgets every frame up to and including `sequence`.
    mutating func acknowledge(upTo sequence: UInt64) {
        guard count > 0, sequence >= firstSequence else { return }
        let acknowledged = Int(min(sequence - firstSequence + 1, UInt64(count)))
        for _ in 0..<acknowledged {
            switch entries.removeFirst() {
            case .encoded(let length):
                encoded.moveReaderIndex(forwardBy: length)
                bytes -= length
            case .data(let payload):
                bytes -= StreamFraming.dataFrameHeaderSize(payloadLength: payload.readableBytes) + payload.readableBytes
            }
        }
        firstSequence += UInt64(acknowledged)
        if count == 0 {
            encoded.clear()
            bytes = 0
        } else if encoded.readerIndex > encoded.capacity / 2 {
            encoded.discardReadBytes()
        }
    }

    /// The frames after `sequence`, to resend, in one buffer of their own; nil when some of them are no longer kept.
    func frames(after sequence: UInt64) -> ByteBuffer? {
        let wanted = sequence + 1
        guard wanted >= firstSequence else { return nil }
        var resend = ByteBuffer()
        forEachFrame { number, frame in
            guard number >= wanted else { return }
            switch frame {
            case .encoded(let bytes):
                resend.writeImmutableBuffer(bytes)
            case .data(let payload):
                try! resend.writeDataFrame(payload)  // its length was checked when it was kept
            }
        }
        return resend
    }

    /// Every frame kept with its number, oldest first: a `data` payload, or the slice of an encoded frame.
    func forEachFrame(_ body: (_ sequence: UInt64, _ frame: SequencedFrame) -> Void) {
        var offset = encoded.readerIndex
        var sequence = firstSequence
        for entry in entries {
            switch entry {
            case .encoded(let length):
                body(sequence, .encoded(encoded.getSlice(at: offset, length: length)!))
                offset += length
            case .data(let payload):
                body(sequence, .data(payload))
            }
            sequence += 1
        }
    }

    /// Drops everything, for a peer that restarted.
    mutating func reset(nextSequence: UInt64) {
        encoded.clear()
        entries.removeAll(keepingCapacity: true)
        bytes = 0
        firstSequence = nextSequence
    }
}
