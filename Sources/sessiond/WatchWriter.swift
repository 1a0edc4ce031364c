import NIOCore

/// What one `watch` connection of the control socket is sent, written on its connection's event loop as each event
/// happens (the `EventHub` hands every watcher the same line, encoded once): a line goes out at once while the socket
/// takes it. While it does not (a client that reads slowly, or not at all), lines wait here, at most
/// ``maxWaitingLines`` of them and ``maxWaitingBytes`` in all, and go as the socket drains. A line that finds no room
/// is counted instead of kept (the oldest stay), and the client gets an `eventsMissed` line with the count in their
/// place once there is room again: a watcher is never left to guess that it missed events, and one that does not read
/// holds a bounded amount of the daemon's memory and never holds back the others or the loop.
///
/// Until its connection asks to watch, it passes everything on and writes nothing; nothing goes before the reply to
/// `watch` (``start(with:)``).
final class WatchWriter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Lines kept for a watcher that does not keep up, at most.
    static let maxWaitingLines = 10_000
    /// Bytes of lines kept for a watcher that does not keep up, at most.
    static let maxWaitingBytes = 8 << 20

    private let maxLines: Int
    private let maxBytes: Int
    /// The line that tells the client how many events it missed.
    private let missedLine: (Int) -> ByteBuffer
    private var context: ChannelHandlerContext?
    private var started = false
    private var waiting = CircularBuffer<ByteBuffer>()
    private var waitingBytes = 0
    /// Events that found no room since the last line kept.
    private var missed = 0

    /// A writer that keeps at most `maxWaitingLines` lines and `maxWaitingBytes` bytes for a client that does not
    /// keep up; `missedLine` makes the line that tells it how many it missed.
    init(
        maxWaitingLines: Int = WatchWriter.maxWaitingLines, maxWaitingBytes: Int = WatchWriter.maxWaitingBytes,
        missedLine: @escaping (Int) -> ByteBuffer
    ) {
        self.maxLines = maxWaitingLines
        self.maxBytes = maxWaitingBytes
        self.missedLine = missedLine
    }

    /// Lines waiting for the socket.
    var waitingLines: Int { waiting.count }
    /// Events not kept since the last line kept; the client is told once there is room.
    var missedEvents: Int { missed }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        forget()
    }

    func channelInactive(context: ChannelHandlerContext) {
        forget()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        writeWaiting()
        context.fireChannelWritabilityChanged()
    }

    /// Writes `reply` (the answer to `watch`) and `replay` (lines from the history, bounded by it), then what waited
    /// for them; from then on, each line as it comes.
    func start(with reply: ByteBuffer, then replay: [ByteBuffer] = []) {
        guard !started, let context else { return }
        started = true
        context.write(wrapOutboundOut(reply), promise: nil)
        for line in replay { context.write(wrapOutboundOut(line), promise: nil) }
        writeWaiting()
        context.flush()
    }

    /// Sends `line` (one event, with its newline): at once while the socket takes it, otherwise after what waits.
    func send(_ line: ByteBuffer) {
        guard let context else { return }
        if started, waiting.isEmpty, missed == 0, context.channel.isWritable {
            context.writeAndFlush(wrapOutboundOut(line), promise: nil)
            return
        }
        if missed > 0 {
            // The notice goes first, in the place of what was missed, once it and the line both have room.
            let notice = missedLine(missed)
            guard hasRoom(for: notice.readableBytes + line.readableBytes, lines: 2) else {
                missed += 1
                return
            }
            keep(notice)
            missed = 0
        }
        guard hasRoom(for: line.readableBytes, lines: 1) else {
            missed = 1
            return
        }
        keep(line)
        writeWaiting()
    }

    /// Writes what waits, then closes the connection (the events ended).
    func finish() {
        guard let context else { return }
        writeWaiting()
        context.close(promise: nil)
    }

    private func hasRoom(for bytes: Int, lines: Int) -> Bool {
        waiting.count + lines <= maxLines && waitingBytes + bytes <= maxBytes
    }

    private func keep(_ line: ByteBuffer) {
        waiting.append(line)
        waitingBytes += line.readableBytes
    }

    /// Writes what waits while the socket takes it; the notice of what was missed once nothing else waits.
    private func writeWaiting() {
        guard started, let context else { return }
        var wrote = false
        while context.channel.isWritable, let line = waiting.popFirst() {
            waitingBytes -= line.readableBytes
            context.write(wrapOutboundOut(line), promise: nil)
            wrote = true
        }
        if missed > 0, waiting.isEmpty, context.channel.isWritable {
            context.write(wrapOutboundOut(missedLine(missed)), promise: nil)
            missed = 0
            wrote = true
        }
        if wrote { context.flush() }
    }

    private func forget() {
        context = nil
        waiting = CircularBuffer()
        waitingBytes = 0
        missed = 0
    }
}

extension NIOLoopBound<WatchWriter> {
    /// Runs `body` with the writer on its loop: at once when called there, otherwise on the loop's next turn.
    func onLoop(_ body: @escaping @Sendable (WatchWriter) -> Void) {
        if eventLoop.inEventLoop {
            body(value)
        } else {
            eventLoop.execute { body(self.value) }
        }
    }
}
