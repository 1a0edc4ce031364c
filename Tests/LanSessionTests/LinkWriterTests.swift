import Logging
import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// Writes on a link: control at once, sequenced frames in bursts.
@Suite("LinkWriter")
struct LinkWriterTests {
    let loop = EmbeddedEventLoop()

    func link() throws -> (Link, EmbeddedChannel) {
        let channel = EmbeddedChannel(loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "10.0.0.7", port: 40_000)).wait()
        let link = Link(
            channel: channel, role: .dialer, transport: LANTransport(), endpoint: nil, intendedPeer: nil,
            liveness: Liveness(heartbeatInterval: .milliseconds(250), timeout: .seconds(2), now: .now()))
        return (link, channel)
    }

    func frame(_ message: Message) throws -> ByteBuffer {
        ByteBuffer(bytes: try StreamFraming.encode(message))
    }

    func outbound(_ channel: EmbeddedChannel) throws -> [ByteBuffer] {
        var buffers: [ByteBuffer] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { buffers.append(buffer) }
        return buffers
    }

    @Test("a burst leaves as its first frame at once and the rest in one write at its end; the next starts afresh")
    func bursts() throws {
        let writer = LinkWriter(loop: loop, logger: Logger(label: "test"))
        let (link, channel) = try link()
        for count in 1...100 { writer.writeSoon(try frame(.counterIncrement(count: UInt64(count))), on: link) }
        #expect(try outbound(channel).count == 1)
        loop.run()
        let rest = try outbound(channel)
        #expect(rest.count == 1)
        var decoder = StreamDecoder()
        decoder.append(contentsOf: Array(rest[0].readableBytesView))
        var counts: [UInt64] = []
        while let count = try decoder.next()?.incrementCount { counts.append(count) }
        #expect(counts == Array(2...100))
        writer.writeSoon(try frame(.counterIncrement(count: 101)), on: link)
        #expect(try outbound(channel).count == 1, "a lone frame waits for nothing")
    }

    @Test("control goes at once, after what is pending; a large frame gets a write of its own")
    func controlAndLargeFrames() throws {
        let writer = LinkWriter(loop: loop, logger: Logger(label: "test"))
        let (link, channel) = try link()
        writer.writeSoon(try frame(.counterIncrement(count: 1)), on: link)
        writer.writeSoon(try frame(.counterIncrement(count: 2)), on: link)
        writer.write(.ping(Ping(nonce: 1, timestamp: 2)), on: link)
        var decoder = StreamDecoder()
        for buffer in try outbound(channel) { decoder.append(contentsOf: Array(buffer.readableBytesView)) }
        var kinds: [MessageKind] = []
        while let message = try decoder.next() { kinds.append(message.kind) }
        #expect(kinds == [.counterIncrement, .counterIncrement, .ping], "in order: the pending frame went first")
        writer.writeSoon(try frame(.data([UInt8](repeating: 0, count: LinkWriter.coalescingLimit))), on: link)
        #expect(try outbound(channel).count == 1, "a large frame is not copied into the pending buffer")
        loop.run()
    }

    @Test("a data payload goes as its frame: a small one copied with its header, a large one as it is after it")
    func dataPayloads() throws {
        let writer = LinkWriter(loop: loop, logger: Logger(label: "test"))
        let (link, channel) = try link()
        let small = ByteBuffer(bytes: [1, 2, 3])
        let large = ByteBuffer(repeating: 9, count: LinkWriter.coalescingLimit)
        writer.writeSoon(data: small, on: link)
        let first = try outbound(channel)
        #expect(first.count == 1, "the burst's first frame goes at once")
        writer.writeSoon(data: small, on: link)
        writer.writeSoon(data: large, on: link)
        #expect(try outbound(channel).isEmpty, "the rest goes with the burst's end")
        loop.run()
        let rest = try outbound(channel)
        #expect(rest.count == 2, "what was pending with the large payload's header, then the payload")
        let sameBytes = rest.last!.withUnsafeReadableBytes { written in
            large.withUnsafeReadableBytes { $0.baseAddress == written.baseAddress }
        }
        #expect(sameBytes, "the large payload is written where it lies")
        var decoder = StreamDecoder()
        for buffer in first + rest { decoder.append(contentsOf: Array(buffer.readableBytesView)) }
        var payloads: [[UInt8]] = []
        while case .data(let bytes)? = try decoder.next() { payloads.append(bytes) }
        #expect(payloads == [[1, 2, 3], [1, 2, 3], [UInt8](repeating: 9, count: LinkWriter.coalescingLimit)])
    }
}
