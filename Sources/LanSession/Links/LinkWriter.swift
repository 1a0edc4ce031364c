import Logging
import NIOCore
import WireCodec

/// Writes frames on links. Link control (pings, pongs, acknowledgements, the handshake) goes at once
/// (``write(_:on:)``, ``writeNow(_:on:)``), after whatever is pending, with no task on a round trip's path. Sequenced
/// messages leave in bursts (``writeSoon(_:on:)``): a burst of increments or data messages goes out in a few system
/// calls per link instead of one per message, and a lone message waits for nothing.
///
/// The first sequenced frame written on a link in a burst of work on the loop goes out at once and opens the burst:
/// one task is queued, which runs once the loop has done what is queued now (the rest of the read, the other calls
/// that arrived). Small frames written meanwhile are copied into the link's pending buffer (in its ``Outbox``, which
/// only the writer reads or writes), which that task writes; a frame of `coalescingLimit` bytes or more is worth a
/// write of its own and goes at once, after what is pending; a large `data` payload, which is the application's buffer
/// and not the replay buffer's, goes after its header with the burst's end (or once `flushLimit` bytes of them wait).
/// Small frames are copied, not kept as slices of the replay buffer, so that appending to the replay buffer does not
/// copy it while a write is outstanding. An application's `data` payload is written with its frame's header in front:
/// a small one copied with the header, a large one as it is, after the header (no copy: the kernel's gather write, or
/// the sealer, reads it where it lies).
final class LinkWriter {
    /// Frames this large go in a write of their own.
    static let coalescingLimit = 16 << 10
    /// A pending buffer this full is written at once.
    static let pendingLimit = 64 << 10
    /// Large frames written in a burst are flushed once this many bytes of them wait.
    static let flushLimit = 512 << 10

    private let loop: any EventLoop
    private let logger: Logger
    /// Links with frames pending, and whether the task that writes them is queued.
    private var linksToFlush: [Link] = []
    private var flushScheduled = false

    /// The entries of its tables, by name (``Session/tableSizes()``).
    var tableSizes: [String: Int] { ["linksToFlush": linksToFlush.count] }

    init(loop: any EventLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
    }

    /// Encodes `message` and writes it on `link` now, after what is pending; nothing but the handshake's own messages
    /// while the acceptor waits for the dialer's last one (a link given up then closes without a word).
    func write(_ message: Message, on link: Link) {
        if message.kind != .noise, link.security?.awaitsLastMessage == true {
            logger.trace("not writing \(message.kind) between Noise messages 2 and 3: it could not be read")
            return
        }
        var buffer = link.channel.allocator.buffer(capacity: 16)
        do {
            try buffer.writeFrame(message)
        } catch {
            logger.debug("cannot encode \(message.kind): \(error)")
            return
        }
        link.sent(at: .now())
        writeNow(buffer, on: link)
    }

    /// Writes `frame` on `link`: now when it opens a burst, otherwise with the burst's end.
    func writeSoon(_ frame: ByteBuffer, on link: Link) {
        guard link.outbox.inBurst else {
            openBurst(on: link)
            link.channel.writeAndFlush(frame, promise: nil)
            return
        }
        var frame = frame
        guard frame.readableBytes < Self.coalescingLimit else {
            // A slice of the replay buffer: flushed at once, so that the next frame appended to the replay buffer
            // (a stream's next chunk) does not find it shared and copy it whole.
            writeNow(frame, on: link)
            return
        }
        let outbox = link.outbox
        if outbox.pending == nil {
            outbox.pending = link.channel.allocator.buffer(capacity: max(Self.coalescingLimit, frame.readableBytes))
        }
        outbox.pending!.writeBuffer(&frame)
        if outbox.pending!.readableBytes >= Self.pendingLimit { writePending(of: link) }
    }

    /// Writes an application's `data` payload on `link` as a `data` frame, as ``writeSoon(_:on:)`` writes a frame.
    /// The payload's length was checked when it was numbered.
    func writeSoon(data payload: ByteBuffer, on link: Link) {
        let length = payload.readableBytes
        let size = StreamFraming.dataFrameHeaderSize(payloadLength: length) + length
        guard size < Self.coalescingLimit else {
            // The header goes last in what is pending, and the payload right after it.
            var header = link.outbox.pending ?? link.channel.allocator.buffer(capacity: 16)
            link.outbox.pending = nil
            try! header.writeDataFrameHeader(payloadLength: length)
            writeLarge(payload, after: header, on: link)
            return
        }
        guard link.outbox.inBurst else {
            openBurst(on: link)
            var frame = link.channel.allocator.buffer(capacity: size)
            try! frame.writeDataFrame(payload)
            link.channel.writeAndFlush(frame, promise: nil)
            return
        }
        let outbox = link.outbox
        if outbox.pending == nil { outbox.pending = link.channel.allocator.buffer(capacity: Self.coalescingLimit) }
        try! outbox.pending!.writeDataFrame(payload)
        if outbox.pending!.readableBytes >= Self.pendingLimit { writePending(of: link) }
    }

    /// Opens a burst on `link` without writing: what ``writeSoon(_:on:)`` is given next waits for the burst's end, in
    /// one write. For a batch of messages known to come together, whose first need not go alone.
    func openBurst(on link: Link) {
        guard !link.outbox.inBurst else { return }
        link.outbox.inBurst = true
        linksToFlush.append(link)
        if !flushScheduled {
            flushScheduled = true
            let bound = NIOLoopBound(self, eventLoop: loop)
            loop.execute { bound.value.flush() }
        }
    }

    /// Writes `frame` on `link` now, after what is pending.
    func writeNow(_ frame: ByteBuffer, on link: Link) {
        if let pending = link.outbox.pending {
            link.outbox.pending = nil
            link.channel.write(pending, promise: nil)
        }
        link.outbox.unflushed = 0
        link.channel.writeAndFlush(frame, promise: nil)
    }

    /// Writes a large payload after its header (with what was pending): at once when it opens a burst; in a burst,
    /// flushed with the burst's end, or once `flushLimit` bytes wait, so that a burst of large messages costs few
    /// system calls, not one each.
    private func writeLarge(_ payload: ByteBuffer, after header: ByteBuffer, on link: Link) {
        let opens = !link.outbox.inBurst
        if opens { openBurst(on: link) }
        link.channel.write(header, promise: nil)
        link.channel.write(payload, promise: nil)
        link.outbox.unflushed += header.readableBytes + payload.readableBytes
        if opens || link.outbox.unflushed >= Self.flushLimit {
            link.outbox.unflushed = 0
            link.channel.flush()
        }
    }

    /// Writes what `link` has pending, if anything, and flushes what was written: before anything that changes what
    /// a write means on the wire (sealing starts, the link closes, an activation resends).
    func writePending(of link: Link) {
        if let pending = link.outbox.pending {
            link.outbox.pending = nil
            link.outbox.unflushed = 0
            link.channel.writeAndFlush(pending, promise: nil)
        } else if link.outbox.unflushed > 0 {
            link.outbox.unflushed = 0
            link.channel.flush()
        }
    }

    /// The end of a burst: writes every link's pending frames.
    private func flush() {
        flushScheduled = false
        var index = 0
        while index < linksToFlush.count {
            let link = linksToFlush[index]
            writePending(of: link)
            link.outbox.inBurst = false
            index += 1
        }
        linksToFlush.removeAll(keepingCapacity: true)
    }
}

extension LinkWriter {
    /// What the writer keeps per link, on the link so that a write finds it without a lookup; only the writer reads or
    /// writes it.
    ///
    /// Its fields change for every frame written, in this file alone and never across a call that could reach them
    /// again: they are not checked for exclusive access at run time.
    final class Outbox {
        /// Written to in the loop's current burst of work.
        @exclusivity(unchecked) fileprivate var inBurst = false
        /// The small frames waiting for the burst's end.
        @exclusivity(unchecked) fileprivate var pending: ByteBuffer?
        /// The bytes of large frames written and not flushed yet.
        @exclusivity(unchecked) fileprivate var unflushed = 0
    }
}
