import BubblesAndCounter
import Foundation
@_spi(Diagnostics) import LanSession
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Throughput over one reliable link between two LanSession sessions on 127.0.0.1 (encrypted, as every session runs;
/// increments also over `--insecure` links, to show what encryption costs), next to plain SwiftNIO TCP moving the
/// same frames in the same run: counter increments per second, and data messages per second (and MB/s)
/// of 1 KiB and of the largest size a message may have.
///
/// The sessions run on the two loops of one 2-thread group; the caller keeps `inFlight` calls outstanding from a
/// task group, so that what is measured is the session's path and not one caller's hop latency. A row ends when the
/// receiving session has everything: its counter shows the sender's count, or its event stream delivered every
/// message.
public enum ThroughputBench {
    static let loopback = "127.0.0.1"
    /// The rows, by the names `Options.only` takes.
    public static let rowKeys = [
        "increments", "increments-insecure", "messages-1k-insecure", "messages-1k", "messages-60k-insecure",
        "messages-60k", "messages-1k-each", "messages-1k-durable-tmpfs", "messages-1k-durable-disk",
    ]
    /// Calls outstanding at once.
    static let inFlight = 64
    /// Messages per `send(contentsOf:)`.
    static let batch = 16
    /// Runs of each message row and of its baseline; the best of each is kept.
    static let rounds = 3
    /// Bytes of a counter increment on the wire (frame header, kind, sequence number and count), for the baseline.
    static let incrementFrameSize = 12

    /// What to measure.
    public struct Options: Sendable {
        public var json = false
        public var increments = 300_000
        public var messages = 200_000
        /// Rows to run (all when nil), by ``Row/key``.
        public var only: Set<String>?
        /// Skip the baselines: for counting what the session's own path allocates or executes (valgrind).
        public var noBaseline = false

        public init(
            json: Bool = false, increments: Int = 300_000, messages: Int = 200_000, only: Set<String>? = nil,
            noBaseline: Bool = false
        ) {
            self.json = json
            self.increments = increments
            self.messages = messages
            self.only = only
            self.noBaseline = noBaseline
        }
    }

    struct Row {
        var metric: String
        var what: String
        var count: Int
        var size: Int
        var seconds: Double
        var baselineSeconds: Double
        var sealed = true
        var baselineName: String?
        var batch = 1
        var delivery = DataDelivery.eachMessage

        /// What the row is compared with.
        var baseline: String { baselineName ?? (metric == "messages_per_second" && sealed ? "tls13" : "tcp") }

        var perSecond: Double { Double(count) / seconds }
        var baselinePerSecond: Double { Double(count) / baselineSeconds }
        var megabytesPerSecond: Double { Double(count * size) / seconds / 1e6 }
    }

    /// Measures the rows `options` asks for and prints them: a table, or with `json` one JSON object per line.
    public static func run(_ options: Options) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        do {
            var rows: [Row] = []
            let wanted = { (key: String) in options.only?.contains(key) ?? true }
            if wanted("increments") {
                rows.append(try await increments(options.increments, group: group, sealed: true, options: options))
            }
            if wanted("increments-insecure") {
                rows.append(try await increments(options.increments, group: group, sealed: false, options: options))
            }
            for size in [1_024, Session.maxMessageSize] {
                let count = size == 1_024 ? options.messages : max(1, options.messages / 16)
                for sealed in [false, true] {
                    let key = "messages-\(size == 1_024 ? "1k" : "60k")\(sealed ? "" : "-insecure")"
                    guard wanted(key) else { continue }
                    rows.append(
                        try await messages(
                            count, size: size, group: group, sealed: sealed, batch: batch, delivery: .batches,
                            options: options))
                }
            }
            // The simple forms: one message per send and per event.
            if wanted("messages-1k-each") {
                rows.append(
                    try await messages(
                        options.messages, size: 1_024, group: group, sealed: true, batch: 1, delivery: .eachMessage,
                        options: options))
            }
            // Durable: each message on the sender's disk before its send returns, next to the same messages reliable.
            for (key, base) in [("messages-1k-durable-tmpfs", "/dev/shm"), ("messages-1k-durable-disk", "/var/tmp")]
            where wanted(key) {
                rows.append(try await durableMessages(options.messages / 4, in: base, group: group))
            }
            report(rows, json: options.json)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try? await group.shutdownGracefully()
    }

    /// Two sessions with the original apps, B connected to A, on the group's two loops.
    static func pairOfApps(
        group: MultiThreadedEventLoopGroup, sealed: Bool = true
    ) async throws -> (BubblesAndCounterApp, BubblesAndCounterApp) {
        try await pair(group: group, sealed: sealed) { session in try await BubblesAndCounterApp(session: session) }
    }

    /// Two sessions, B connected to A, on the group's two loops.
    static func pair(group: MultiThreadedEventLoopGroup) async throws -> (Session, Session) {
        try await pair(group: group) { $0 }
    }

    /// Two sessions, B connected to A, on the group's two loops, each with what `add` adds before it starts.
    static func pair<Added: Sendable>(
        group: MultiThreadedEventLoopGroup, sealed: Bool = true, durable: String? = nil,
        _ add: (Session) async throws -> Added
    ) async throws -> (Added, Added) {
        var logger = Logger(label: "throughput-bench")
        logger.logLevel = .notice
        func configuration(_ name: String) -> SessionConfiguration {
            var configuration = SessionConfiguration(
                displayName: name, sessionName: "throughput-bench", host: loopback, port: 0)
            configuration.admission = .open
            configuration.isInsecure = !sealed
            return configuration
        }
        let loops = Array(group.makeIterator())
        var sender = configuration("a")
        sender.durableDirectory = durable
        let a = try Session(configuration: sender, eventLoop: loops[0], logger: logger)
        let b = try Session(configuration: configuration("b"), eventLoop: loops[1], logger: logger)
        let added = (try await add(a), try await add(b))
        let port = try await a.start()
        try await b.start()
        try await b.connect(to: Endpoint(host: loopback, port: port))
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let seenByA = try await a.peers().first { $0.peerID == b.peerID }?.state
            let seenByB = try await b.peers().first { $0.peerID == a.peerID }?.state
            if seenByA == .connected && seenByB == .connected { break }
            guard ContinuousClock.now < deadline else { throw BenchFailure("the sessions did not connect in 10 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
        return added
    }

    /// `count` calls of `body`, `inFlight` at a time: `inFlight` callers, each making its share of the calls one
    /// after the other (as many threads of an app would).
    static func concurrently(_ count: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<inFlight {
                let calls = count / inFlight + (caller < count % inFlight ? 1 : 0)
                group.addTask { for _ in 0..<calls { try await body() } }
            }
            try await group.waitForAll()
        }
    }

    static func increments(
        _ count: Int, group: MultiThreadedEventLoopGroup, sealed: Bool, options: Options
    ) async throws -> Row {
        var rawTime = Duration.zero
        if !options.noBaseline {
            let raw = try await RawSink.start(group: group, expecting: count * incrementFrameSize)
            let rawStart = ContinuousClock.now
            try await raw.send(count: count, size: incrementFrameSize - 4, batch: inFlight)
            rawTime = ContinuousClock.now - rawStart
            await raw.close()
        }

        let (a, b) = try await pairOfApps(group: group, sealed: sealed)
        let start = ContinuousClock.now
        try await concurrently(count) { _ = try await a.increment() }
        while try await b.counter()[a.session.peerID] < UInt64(count) {
            try await Task.sleep(for: .microseconds(200))
        }
        let time = ContinuousClock.now - start
        await b.session.stop()
        await a.session.stop()
        return Row(
            metric: sealed ? "increments_per_second" : "increments_per_second_insecure",
            what: sealed ? "counter increments" : "increments, insecure",
            count: count, size: incrementFrameSize,
            seconds: time.seconds, baselineSeconds: rawTime.seconds)
    }

    /// `count` data messages of `size` bytes from A to B: sent `batch` at a time with `send(contentsOf:)` (one
    /// message per call when 1) by `inFlight` callers, read in batches (one event per read of the link) or one event
    /// per message.
    static func messages(
        _ count: Int, size: Int, group: MultiThreadedEventLoopGroup, sealed: Bool, batch: Int, delivery: DataDelivery,
        options: Options
    ) async throws -> Row {
        // The anchor: plain SwiftNIO TCP for unsealed messages, SwiftNIO over TLS 1.3 for sealed ones. Each side is
        // the best of `rounds` runs: on two shared vCPUs a single run of either swings by a factor of two or more.
        let flushEvery = max(1, inFlight * 1_024 / size)
        var rawTime = Duration.zero
        if !options.noBaseline {
            var best: Duration?
            for _ in 0..<rounds {
                let time: Duration
                if sealed {
                    time = try await tlsBaseline(count: count, size: size, batch: flushEvery, group: group)
                } else {
                    let raw = try await RawSink.start(group: group, expecting: count * (size + 4))
                    let rawStart = ContinuousClock.now
                    try await raw.send(count: count, size: size, batch: flushEvery)
                    time = ContinuousClock.now - rawStart
                    await raw.close()
                }
                best = min(best ?? time, time)
            }
            rawTime = best ?? .zero
        }
        var best: Duration?
        for _ in 0..<rounds {
            let time = try await sessionMessages(
                count, size: size, group: group, sealed: sealed, batch: batch, delivery: delivery)
            best = min(best ?? time, time)
        }
        let time = best ?? .zero
        var what = sealed ? "messages" : "messages, insecure"
        if batch > 1 { what += ", \(batch)/send" }
        if delivery == .eachMessage { what += ", 1/event" }
        return Row(
            metric: "messages_per_second", what: what, count: count, size: size, seconds: time.seconds,
            baselineSeconds: rawTime.seconds, sealed: sealed, batch: batch, delivery: delivery)
    }

    /// Durable 1 KiB messages, `batch` per send, their log in a new directory under `base`; the baseline is the same
    /// messages reliable (not durable) in the same run. Each side is the best of `rounds` runs.
    static func durableMessages(_ count: Int, in base: String, group: MultiThreadedEventLoopGroup) async throws -> Row {
        var reliable: Duration?
        var durable: Duration?
        for _ in 0..<rounds {
            let time = try await sessionMessages(
                count, size: 1_024, group: group, sealed: true, batch: batch, delivery: .batches)
            reliable = min(reliable ?? time, time)
            let directory = base + "/lansession-durable-\(UInt64.random(in: 0...UInt64.max))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let durableTime = try await sessionMessages(
                count, size: 1_024, group: group, sealed: true, batch: batch, delivery: .batches, durable: directory)
            durable = min(durable ?? durableTime, durableTime)
        }
        return Row(
            metric: "messages_per_second", what: "messages, durable (\(base)), \(batch)/send", count: count,
            size: 1_024, seconds: (durable ?? .zero).seconds, baselineSeconds: (reliable ?? .zero).seconds,
            baselineName: "reliable", batch: batch, delivery: .batches)
    }

    /// One run of ``messages(_:size:group:sealed:batch:delivery:options:)`` between two new sessions: how long until
    /// the receiver has every message. With `durable`, the sender keeps its durable messages there and sends them
    /// durable.
    static func sessionMessages(
        _ count: Int, size: Int, group: MultiThreadedEventLoopGroup, sealed: Bool, batch: Int, delivery: DataDelivery,
        durable: String? = nil
    ) async throws -> Duration {
        let (a, b) = try await pair(group: group, sealed: sealed, durable: durable) { $0 }
        let events = b.subscribe(bufferSize: 1 << 20, data: delivery)
        let message = ByteBuffer(repeating: 7, count: size)
        let receiver = Task {
            var seen = 0
            for await event in events {
                switch event {
                case .messages(let messages):
                    seen += messages.count
                    precondition(messages.allSatisfy { $0.readableBytes == size })
                case .data(_, let bytes, _):
                    seen += 1
                    precondition(bytes.readableBytes == size)
                default: continue
                }
                if seen == count { return }
            }
        }
        let start = ContinuousClock.now
        let peer = b.peerID
        let batches = (count + batch - 1) / batch
        let batched = Array(repeating: message, count: batch)
        let mode: SendMode = durable == nil ? .reliable : .durable
        if batch == 1 {
            try await concurrently(count) { try await a.send(message, to: [peer], mode: mode) }
        } else {
            // The last batch is cut so that exactly `count` messages go.
            let last = count - (batches - 1) * batch
            let counter = Counter()
            try await concurrently(batches) {
                let isLast = counter.next() == batches - 1
                try await a.send(contentsOf: isLast ? Array(batched.prefix(last)) : batched, to: [peer], mode: mode)
            }
        }
        await receiver.value
        let time = ContinuousClock.now - start
        await b.stop()
        await a.stop()
        return time
    }

    static func report(_ rows: [Row], json: Bool) {
        if json {
            for row in rows {
                let object: [String: Any] = [
                    "metric": row.metric, "count": row.count, "size": row.size, "seconds": row.seconds,
                    "per_second": row.perSecond.rounded(), "megabytes_per_second": row.megabytesPerSecond,
                    "raw_tcp_per_second": row.baselinePerSecond.rounded(), "baseline": row.baseline,
                    "ratio_to_raw": row.perSecond / row.baselinePerSecond,
                    "sealed": row.sealed, "batch": row.batch, "delivery": row.delivery.rawValue, "what": row.what,
                ]
                let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            }
            return
        }
        print("one reliable link on 127.0.0.1, \(inFlight) callers, the same frames in each baseline:")
        print("  tcp = plain SwiftNIO TCP, tls13 = SwiftNIO over TLS 1.3 (AES-128-GCM); messages read in batches")
        if rows.contains(where: { $0.baselineName == "reliable" }) {
            print("  durable rows: their baseline is the same messages sent reliable (not durable) in the same run")
        }
        print(
            "what".padding(toLength: 44, withPad: " ", startingAt: 0) + "    count      per second     MB/s"
                + "   baseline per second   ratio")
        for row in rows {
            let what = "\(row.what), \(row.size) B".padding(toLength: 44, withPad: " ", startingAt: 0)
            print(
                what
                    + String(
                        format: " %8d  %14.0f  %7.1f  %13.0f %-6@  %6.2f×", row.count, row.perSecond,
                        row.megabytesPerSecond, row.baselinePerSecond, row.baseline,
                        row.perSecond / row.baselinePerSecond))
        }
        if rows.contains(where: { $0.metric.hasPrefix("increments_per_second") }) {
            print(
                "increments: raw TCP sends a frame each; the session sends the absolute count once per turn of its loop, "
                    + "so MB/s is of the increments, not of the wire")
        }
    }
}

/// Numbers the calls of ``ThroughputBench/concurrently(_:_:)`` across its callers.
final class Counter: Sendable {
    private let value = Mutex(0)

    func next() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
