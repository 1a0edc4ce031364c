import BubblesAndCounter
import Foundation
import LanSession
import NIOCore
import NIOEmbedded
import NIOPosix
import Synchronization
import Testing

@testable import sessiond

/// The event hub on an embedded loop, with watchers on embedded channels of that loop.
@Suite("EventHub")
struct EventHubTests {
    final class Observed: Sendable {
        let events = Mutex<[String]>([])
    }

    /// A watcher's channel on `loop`, connected, and its writer bound to the loop.
    static func watcher(on loop: EmbeddedEventLoop) throws -> (EmbeddedChannel, NIOLoopBound<WatchWriter>) {
        let writer = WatchWriter(maxWaitingLines: 2, maxWaitingBytes: 1 << 20) { missed in
            ByteBuffer(string: #"{"event":"eventsMissed","count":\#(missed)}"# + "\n")
        }
        let channel = EmbeddedChannel(handler: writer, loop: loop)
        channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1), promise: nil)
        return (channel, NIOLoopBound(writer, eventLoop: loop))
    }

    /// The events a watcher was written, by name (the reply as "reply").
    static func events(_ channel: EmbeddedChannel) throws -> [String] {
        var names: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            let text = String(buffer: buffer)
            #expect(text.hasSuffix("\n"), "one line each: \(text)")
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            names.append(object?["event"] as? String ?? (object?["ok"] != nil ? "reply" : "?"))
        }
        return names
    }

    @Test("every event goes to the observer first and to every watcher as one line, at once")
    func deliveredAtOnce() throws {
        let loop = EmbeddedEventLoop()
        let observed = Observed()
        let hub = EventHub(loop: loop) { event in observed.events.withLock { $0.append("\(event)") } }
        let (one, oneWriter) = try Self.watcher(on: loop)
        let (two, twoWriter) = try Self.watcher(on: loop)
        hub.take(.session(.peerLost(PeerID(1))))  // before anyone watches: the observer only
        hub.watch(oneWriter, closed: one.closeFuture)
        hub.watch(twoWriter, closed: two.closeFuture)
        hub.take(.app(.counter(PeerID(2), count: 5, total: 5)))
        #expect(try Self.events(one) == ["reply", "counter"])
        #expect(try Self.events(two) == ["reply", "counter"])
        #expect(observed.events.withLock { $0.count } == 2)
        // The line carries the event's fields and its time.
        hub.take(.app(.counter(PeerID(2), count: 6, total: 6)))
        let line = String(buffer: try #require(try one.readOutbound(as: ByteBuffer.self)))
        #expect(line.contains(#""count":6"#) && line.contains(#""time":""#))
        _ = try one.finish()
        _ = try two.finish()
    }

    @Test("a watcher that does not read is not waited for: the others get every event, it gets the missed count")
    func slowWatcher() throws {
        let loop = EmbeddedEventLoop()
        let hub = EventHub(loop: loop)
        let (slow, slowWriter) = try Self.watcher(on: loop)
        let (fast, fastWriter) = try Self.watcher(on: loop)
        hub.watch(slowWriter, closed: slow.closeFuture)
        hub.watch(fastWriter, closed: fast.closeFuture)
        slow.isWritable = false
        for count in 1...10 { hub.take(.app(.counter(PeerID(2), count: UInt64(count), total: UInt64(count)))) }
        #expect(try Self.events(fast) == ["reply"] + Array(repeating: "counter", count: 10))
        slow.isWritable = true
        slow.pipeline.fireChannelWritabilityChanged()
        #expect(try Self.events(slow) == ["reply", "counter", "counter", "eventsMissed"])
        _ = try slow.finish()
        _ = try fast.finish()
    }

    @Test("a watcher that went is dropped; when the events end every watcher is closed and the hub ended")
    func endings() throws {
        let loop = EmbeddedEventLoop()
        let hub = EventHub(loop: loop)
        let (gone, goneWriter) = try Self.watcher(on: loop)
        let (staying, stayingWriter) = try Self.watcher(on: loop)
        hub.watch(goneWriter, closed: gone.closeFuture)
        hub.watch(stayingWriter, closed: staying.closeFuture)
        _ = try Self.events(gone)
        _ = try gone.finish()
        hub.take(.session(.peerLost(PeerID(1))))
        #expect(try Self.events(staying) == ["reply", "peerLost"])
        let ended = Observed()
        hub.ended.whenComplete { _ in ended.events.withLock { $0.append("ended") } }
        hub.end()
        #expect(ended.events.withLock { $0 } == ["ended"])
        #expect(!staying.isActive)
        // A watch that comes after the end is answered and closed.
        let (late, lateWriter) = try Self.watcher(on: loop)
        hub.watch(lateWriter, closed: late.closeFuture)
        #expect(try Self.events(late) == ["reply"])
        #expect(!late.isActive)
    }

    /// The lines a watcher was written, as JSON objects.
    static func lines(_ channel: EmbeddedChannel) throws -> [[String: Any]] {
        var lines: [[String: Any]] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            lines.append(
                try #require(try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any]))
        }
        return lines
    }

    /// The numbers of the events among `lines`.
    static func numbers(_ lines: [[String: Any]]) -> [Int] { lines.compactMap { $0["seq"] as? Int } }

    static func counter(_ count: Int) -> DaemonEvent {
        .app(.counter(PeerID(2), count: UInt64(count), total: UInt64(count)))
    }

    @Test("every event is numbered from 1, watched or not; the reply says the run and the last number")
    func numbered() throws {
        let loop = EmbeddedEventLoop()
        let hub = EventHub(loop: loop, run: "0123456789abcdef")
        for count in 1...3 { hub.take(Self.counter(count)) }
        let (channel, writer) = try Self.watcher(on: loop)
        hub.watch(writer, closed: channel.closeFuture)
        hub.take(Self.counter(4))
        let lines = try Self.lines(channel)
        let reply = try #require(lines.first?["result"] as? [String: Any])
        #expect(reply["run"] as? String == "0123456789abcdef")
        #expect(reply["seq"] as? Int == 3)
        #expect(Self.numbers(lines) == [4], "without since: the live events only, as before")
        _ = try channel.finish()
    }

    @Test("a watcher back with a number gets the events after it once, then the live ones, none twice or missing")
    func resumes() throws {
        let loop = EmbeddedEventLoop()
        let hub = EventHub(loop: loop, run: "r1")
        let (first, firstWriter) = try Self.watcher(on: loop)
        hub.watch(firstWriter, closed: first.closeFuture)
        for count in 1...3 { hub.take(Self.counter(count)) }
        let seen = Self.numbers(try Self.lines(first))
        #expect(seen == [1, 2, 3])
        _ = try first.finish()  // the client goes away; the events go on
        for count in 4...6 { hub.take(Self.counter(count)) }
        let (again, againWriter) = try Self.watcher(on: loop)
        hub.watch(againWriter, since: UInt64(seen.last ?? 0), run: "r1", closed: again.closeFuture)
        hub.take(Self.counter(7))
        let lines = try Self.lines(again)
        #expect((lines.first?["result"] as? [String: Any])?["seq"] as? Int == 6)
        #expect(Self.numbers(lines) == [4, 5, 6, 7])
        #expect(!lines.contains { $0["event"] as? String == "eventsMissed" })
        #expect((lines[1]["count"] as? Int) == 4, "each replayed line is the event's own")
        _ = try again.finish()
    }

    @Test("a number older than the history: one eventsMissed with the exact count, then what the history holds")
    func tooOld() throws {
        let loop = EmbeddedEventLoop()
        let hub = EventHub(loop: loop, run: "r1", history: 3)
        for count in 1...10 { hub.take(Self.counter(count)) }
        let (channel, writer) = try Self.watcher(on: loop)
        hub.watch(writer, since: 2, run: "r1", closed: channel.closeFuture)
        hub.take(Self.counter(11))
        let lines = try Self.lines(channel)
        #expect(lines.count == 6, "the reply, the notice, 8...10, 11")
        #expect(lines[1]["event"] as? String == "eventsMissed")
        #expect(lines[1]["count"] as? Int == 5, "3...7")
        #expect(lines[1]["restarted"] == nil && lines[1]["seq"] == nil)
        #expect(Self.numbers(lines) == [8, 9, 10, 11])
        _ = try channel.finish()
    }

    @Test("a number of another run: eventsMissed says the daemon restarted, then this run's events")
    func restarted() throws {
        let loop = EmbeddedEventLoop()
        let hub = EventHub(loop: loop, run: "r2")
        for count in 1...2 { hub.take(Self.counter(count)) }
        let (channel, writer) = try Self.watcher(on: loop)
        hub.watch(writer, since: 40, run: "r1", closed: channel.closeFuture)
        let lines = try Self.lines(channel)
        #expect(lines[1]["event"] as? String == "eventsMissed")
        #expect(lines[1]["restarted"] as? Bool == true)
        #expect(lines[1]["count"] as? Int == 0, "this run's are all held")
        #expect(Self.numbers(lines) == [1, 2])
        _ = try channel.finish()
    }

    @Test("a replay larger than the writer keeps for a slow client is written whole")
    func replayNotCapped() throws {
        let loop = EmbeddedEventLoop()
        let hub = EventHub(loop: loop, run: "r1")
        for count in 1...5 { hub.take(Self.counter(count)) }
        let (channel, writer) = try Self.watcher(on: loop)  // keeps 2 lines for a client that does not read
        hub.watch(writer, since: 0, run: "r1", closed: channel.closeFuture)
        #expect(Self.numbers(try Self.lines(channel)) == [1, 2, 3, 4, 5])
        _ = try channel.finish()
    }

    @Test("a stream subscribed gets every event, and ends with the hub")
    func streams() async throws {
        let loop = EmbeddedEventLoop()
        let hub = EventHub(loop: loop)
        let stream = hub.subscribe()
        hub.take(.session(.peerLost(PeerID(1))))
        hub.take(.app(.counter(PeerID(2), count: 1, total: 1)))
        hub.end()
        var seen: [String] = []
        for await event in stream { seen.append("\(event)") }
        #expect(seen.count == 2)
    }

    @Test("a stream that falls behind keeps the oldest events, then is told how many it missed")
    func streamFallsBehind() async throws {
        let hub = EventHub(loop: MultiThreadedEventLoopGroup.singleton.next())
        var events = hub.subscribe(bufferSize: 2).makeAsyncIterator()
        func counter(_ count: UInt64) -> DaemonEvent { .app(.counter(PeerID(2), count: count, total: count)) }
        func count(_ event: DaemonEvent?) -> UInt64? {
            guard case .app(.counter(_, let count, _)) = event else { return nil }
            return count
        }
        for value in 1...3 { hub.take(counter(UInt64(value))) }
        try await hub.loop.submit {}.get()  // the three handed on: the third found no room
        #expect(count(await events.next()) == 1)
        #expect(count(await events.next()) == 2)
        hub.take(counter(4))
        hub.end()
        let notice = await events.next()
        guard case .session(.eventsMissed(let missed)) = notice else {
            Issue.record("not a notice: \(String(describing: notice))")
            return
        }
        #expect(missed == 1)
        #expect(count(await events.next()) == 4)
        #expect(await events.next() == nil)
    }
}
