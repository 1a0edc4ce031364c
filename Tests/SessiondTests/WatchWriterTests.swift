import NIOCore
import NIOEmbedded
import Testing

@testable import sessiond

/// A `watch` connection's writer on an embedded channel: what goes out at once, what waits, and what is counted.
@Suite("WatchWriter")
struct WatchWriterTests {
    static func line(_ text: String) -> ByteBuffer { ByteBuffer(string: text + "\n") }

    /// A connected channel with a writer that keeps at most `lines` lines and `bytes` bytes.
    static func channel(lines: Int = 100, bytes: Int = 1 << 20) throws -> (EmbeddedChannel, WatchWriter) {
        let writer = WatchWriter(maxWaitingLines: lines, maxWaitingBytes: bytes) { line("missed \($0)") }
        let channel = EmbeddedChannel(handler: writer)
        channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1), promise: nil)
        return (channel, writer)
    }

    /// Every line written so far.
    static func written(_ channel: EmbeddedChannel) throws -> [String] {
        var lines: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            lines.append(String(buffer: buffer).trimmingSuffix("\n"))
        }
        return lines
    }

    static func writable(_ channel: EmbeddedChannel, _ writable: Bool) {
        channel.isWritable = writable
        channel.pipeline.fireChannelWritabilityChanged()
    }

    @Test("nothing goes before the reply to watch; then what waited, then each line at once")
    func replyFirst() throws {
        let (channel, writer) = try Self.channel()
        writer.send(Self.line("early"))
        #expect(try Self.written(channel).isEmpty)
        writer.start(with: Self.line("reply"))
        #expect(try Self.written(channel) == ["reply", "early"])
        writer.send(Self.line("next"))
        #expect(try Self.written(channel) == ["next"])
        // Inbound lines pass on untouched.
        try channel.writeInbound(Self.line("request"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == Self.line("request"))
        _ = try channel.finish()
    }

    @Test("while the socket takes nothing, lines wait in order and go once it drains")
    func waitsForTheSocket() throws {
        let (channel, writer) = try Self.channel()
        writer.start(with: Self.line("reply"))
        Self.writable(channel, false)
        for index in 0..<5 { writer.send(Self.line("event \(index)")) }
        #expect(try Self.written(channel) == ["reply"])
        #expect(writer.waitingLines == 5)
        Self.writable(channel, true)
        #expect(try Self.written(channel) == (0..<5).map { "event \($0)" })
        #expect(writer.waitingLines == 0)
        _ = try channel.finish()
    }

    @Test("a watcher that does not keep up keeps the oldest lines; the rest are counted and told in their place")
    func missedAreTold() throws {
        let (channel, writer) = try Self.channel(lines: 3)
        writer.start(with: Self.line("reply"))
        _ = try Self.written(channel)
        Self.writable(channel, false)
        for index in 0..<10 { writer.send(Self.line("event \(index)")) }
        #expect(writer.waitingLines == 3 && writer.missedEvents == 7)
        // Room again: the kept lines, then the notice, before anything newer.
        Self.writable(channel, true)
        #expect(try Self.written(channel) == ["event 0", "event 1", "event 2", "missed 7"])
        writer.send(Self.line("event 10"))
        #expect(try Self.written(channel) == ["event 10"])
        _ = try channel.finish()
    }

    @Test("the notice takes its place in the queue when the socket is still full, once there is room for it")
    func noticeQueued() throws {
        let (channel, writer) = try Self.channel(lines: 2)
        writer.start(with: Self.line("reply"))
        _ = try Self.written(channel)
        Self.writable(channel, false)
        for index in 0..<4 { writer.send(Self.line("event \(index)")) }
        #expect(writer.waitingLines == 2 && writer.missedEvents == 2)
        // The socket takes the two kept lines but is full again before the notice.
        channel.isWritable = true
        writer.send(Self.line("event 4"))  // no room for the notice and this line yet: counted
        #expect(writer.missedEvents == 3)
        channel.pipeline.fireChannelWritabilityChanged()
        #expect(try Self.written(channel) == ["event 0", "event 1", "missed 3"])
        _ = try channel.finish()
    }

    @Test("bytes are bounded as well as lines")
    func boundedBytes() throws {
        let (channel, writer) = try Self.channel(lines: 100, bytes: 20)
        writer.start(with: Self.line("reply"))
        _ = try Self.written(channel)
        Self.writable(channel, false)
        writer.send(Self.line("0123456789"))  // 11 bytes
        writer.send(Self.line("0123456789"))  // 22 in all: not kept
        #expect(writer.waitingLines == 1 && writer.missedEvents == 1)
        _ = try channel.finish()
    }

    @Test("finish writes what it can, then closes; a closed connection keeps nothing")
    func finishCloses() throws {
        let (channel, writer) = try Self.channel()
        writer.start(with: Self.line("reply"))
        writer.send(Self.line("last"))
        writer.finish()
        #expect(try Self.written(channel) == ["reply", "last"])
        #expect(!channel.isActive)
        writer.send(Self.line("after"))
        #expect(writer.waitingLines == 0)
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
