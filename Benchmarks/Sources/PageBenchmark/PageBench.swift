import Dispatch
import Foundation
import Histogram
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOWebSocket
import SessionControl

/// What open pages cost a running sessiond, and what one page flooding moves does to everyone else.
///
/// For each row: N pages open and reading (they are the "other pages"); one more page drags bubble 0 at 60 Hz, and,
/// in the flood rows, one more sends moves of bubble 1 as fast as its socket takes them. Measured over the row:
/// - the move latency the N pages see: from the drag page writing a move to each page reading the bubble at that
///   position (one clock: every page is in this process), p50/p99/max, and what share of the moves a page saw (the
///   daemon coalesces positions for a page that lags; the last one always arrives);
/// - `status` on the control socket every 20 ms (a new connection each time, as `session-client status` makes):
///   p50/p99/max;
/// - the daemon's CPU (utime + stime from /proc) and its resident memory before the pages open, at their peak, and
///   3 s after they all closed.
/// The first row, one page and no flood, is the baseline each other row is read against.
public enum PageBench {
    /// What to measure, and the daemon to measure.
    public struct Options: Sendable {
        /// The daemon's page.
        public var url: String
        /// The daemon's control socket.
        public var control: String
        /// The daemon's process id (for its CPU and RSS).
        public var pid: Int32
        public var seconds = 8
        public var rows: [(pages: Int, flood: Bool)] = [(1, false), (1, true), (20, true), (200, true)]
        public var json = false

        /// The rows for these page counts: the first without a flood (the baseline), then each with one.
        public static func rows(pages counts: [Int]) -> [(pages: Int, flood: Bool)] {
            [(counts[0], false)] + counts.map { ($0, true) }
        }

        public init(url: String, control: String, pid: Int32, seconds: Int = 8, pages: [Int]? = nil, json: Bool) {
            self.url = url
            self.control = control
            self.pid = pid
            self.seconds = seconds
            if let pages, !pages.isEmpty { rows = Self.rows(pages: pages) }
            self.json = json
        }
    }

    /// Opens the pages of every row against the daemon and prints the rows: a table, or with `json` one JSON object
    /// per line.
    public static func run(_ options: Options) async throws {
        guard let address = PageClient.Address(url: options.url) else {
            throw BenchError("not a page address: \(options.url)")
        }
        if !options.json {
            emit(
                "pages  flood  moves seen  move p50   p99      max      status p50  p99      max      CPU     "
                    + "RSS before  peak     after")
        }
        for row in options.rows {
            let result = try await Row(
                pages: row.pages, flood: row.flood, seconds: options.seconds, address: address,
                control: options.control, pid: options.pid
            ).run()
            emit(options.json ? result.json : result.line)
        }
    }

    /// A line on stdout at once (stdout is a pipe when the script runs this).
    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// One row of the table.
struct RowResult {
    var pages: Int
    var flood: Bool
    var seenShare: Double
    var moves: Histogram<UInt64>
    var status: Histogram<UInt64>
    var cpuPercent: Double
    var rss: (before: Int, peak: Int, after: Int)
    var floodSent: Int

    private func ms(_ histogram: Histogram<UInt64>, _ percentile: Double) -> Double {
        Double(percentile >= 100 ? histogram.max : histogram.valueAtPercentile(percentile)) / 1e6
    }

    var line: String {
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(1, width - text.count))
        }
        func cell(_ value: Double, _ width: Int = 9) -> String { pad(String(format: "%.1f ms", value), width) }
        return pad("\(pages)", 7) + pad(flood ? "yes" : "no", 7) + pad(String(format: "%.0f%%", seenShare * 100), 12)
            + cell(ms(moves, 50), 11) + cell(ms(moves, 99)) + cell(ms(moves, 100)) + cell(ms(status, 50), 12)
            + cell(ms(status, 99)) + cell(ms(status, 100)) + pad(String(format: "%.0f%%", cpuPercent), 8)
            + pad("\(rss.before / 1024) MB", 12) + pad("\(rss.peak / 1024) MB", 9) + "\(rss.after / 1024) MB"
    }

    var json: String {
        let fields: [String: Any] = [
            "event": "pages", "pages": pages, "flood": flood, "floodMovesSent": floodSent,
            "movesSeenShare": (seenShare * 1000).rounded() / 1000, "moveSamples": moves.totalCount,
            "moveP50Ms": ms(moves, 50), "moveP99Ms": ms(moves, 99), "moveMaxMs": ms(moves, 100),
            "statusCalls": status.totalCount, "statusP50Ms": ms(status, 50), "statusP99Ms": ms(status, 99),
            "statusMaxMs": ms(status, 100), "cpuPercent": cpuPercent.rounded(), "rssBeforeKB": rss.before,
            "rssPeakKB": rss.peak, "rssAfterKB": rss.after,
        ]
        let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// One row: its pages, the drag, the flood, the status poller, the daemon's numbers.
struct Row {
    let pages: Int
    let flood: Bool
    let seconds: Int
    let address: PageClient.Address
    let control: String
    let pid: Int32

    /// The position of the drag's `index`th move, unique over a row.
    static func position(_ index: Int) -> (x: Float, y: Float) {
        (Float(20 + index % 200), Float(20 + (index / 200) % 300))
    }

    static func index(x: Double, y: Double) -> Int? {
        let (column, line) = (Int(x) - 20, Int(y) - 20)
        guard (0..<200).contains(column), (0..<300).contains(line), Double(Int(x)) == x else { return nil }
        return line * 200 + column
    }

    /// The flooding page's own thread, so that its writes never delay the drag's or the other pages' reads here.
    static let floodGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    func run() async throws -> RowResult {
        let group = MultiThreadedEventLoopGroup.singleton
        let before = Proc.rss(pid)
        let moveCount = seconds * 60
        let sentAt = NIOLockedValueBox([UInt64](repeating: 0, count: moveCount))
        let samples = NIOLockedValueBox(
            Histogram<UInt64>(
                lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three
            ))
        let seen = NIOLockedValueBox(0)
        var channels: [any Channel] = []
        defer { for channel in channels { channel.close(promise: nil) } }

        // The other pages, each recording the first time it sees each of the drag's positions.
        for _ in 0..<pages {
            let firsts = NIOLockedValueBox(Set<Int>())
            let reader = PageReader { bubble in
                guard bubble.view == 0, let index = Row.index(x: bubble.x, y: bubble.y), index < moveCount else {
                    return
                }
                let at = Row.now()
                guard firsts.withLockedValue({ $0.insert(index).inserted }) else { return }
                let sent = sentAt.withLockedValue { $0[index] }
                guard sent > 0, at >= sent else { return }
                samples.withLockedValue { _ = $0.record(at - sent) }
                seen.withLockedValue { $0 += 1 }
            }
            channels.append(try await PageClient.open(address, group: group) { reader })
        }
        // The drag's page, and the flood's.
        let dragHeld = NIOLockedValueBox(false)
        let dragger = try await PageClient.open(address, group: group) {
            PageReader { bubble in if bubble.view == 0, bubble.held { dragHeld.withLockedValue { $0 = true } } }
        }
        channels.append(dragger)
        var flooder: (channel: any Channel, handler: MoveFlooder)?
        if flood {
            let floodHeld = NIOLockedValueBox(false)
            let handler = MoveFlooder(view: 1)
            let channel = try await PageClient.open(address, group: Row.floodGroup) {
                PageReader { bubble in if bubble.view == 1, bubble.held { floodHeld.withLockedValue { $0 = true } } }
            }
            try await channel.pipeline.addHandler(handler).get()
            channels.append(channel)
            try await channel.writeAndFlush(PageClient.text(#"{"op":"pickup","view":1}"#)).get()
            guard try await waitUntil({ floodHeld.withLockedValue { $0 } }) else {
                throw BenchError("the flooding page's pick-up of bubble 1 was not granted")
            }
            flooder = (channel, handler)
        }
        try await dragger.writeAndFlush(PageClient.text(#"{"op":"pickup","view":0}"#)).get()
        guard try await waitUntil({ dragHeld.withLockedValue { $0 } }) else {
            throw BenchError("the dragging page's pick-up of bubble 0 was not granted")
        }

        // Status every 20 ms, on a thread of its own.
        let status = StatusPoller(path: control)
        status.start()
        let cpuBefore = Proc.cpuSeconds(pid)
        let started = Row.now()
        if let flooder {
            let (channel, handler) = flooder
            try await channel.eventLoop.submit {
                handler.start(context: try channel.pipeline.syncOperations.context(handler: handler))
            }.get()
        }
        var peak = before
        for index in 0..<moveCount {
            let due = started + UInt64(index) * 1_000_000_000 / 60
            let now = Row.now()
            if due > now { try await Task.sleep(nanoseconds: due - now) }
            let (x, y) = Row.position(index)
            sentAt.withLockedValue { $0[index] = Row.now() }
            dragger.writeAndFlush(PageClient.move(0, x: x, y: y), promise: nil)
            if index % 60 == 0 { peak = max(peak, Proc.rss(pid)) }
        }
        flooder?.handler.stop()
        try await Task.sleep(for: .milliseconds(500))  // the last moves' way to every page
        let elapsed = Double(Row.now() - started) / 1e9
        let cpu = (Proc.cpuSeconds(pid) - cpuBefore) / elapsed * 100
        peak = max(peak, Proc.rss(pid))
        let statusSamples = status.stop()
        let floodSent = flooder?.handler.sent ?? 0
        // Both bubbles free again for the next row.
        try await dragger.writeAndFlush(PageClient.text(#"{"op":"drop","view":0,"x":100,"y":100}"#)).get()
        if let flooder {
            try await flooder.channel.writeAndFlush(PageClient.text(#"{"op":"drop","view":1,"x":200,"y":100}"#)).get()
        }
        try await Task.sleep(for: .milliseconds(200))
        for channel in channels { try? await channel.close() }
        channels = []
        try await Task.sleep(for: .seconds(3))  // the daemon lets go of what the pages held
        return RowResult(
            pages: pages, flood: flood, seenShare: Double(seen.withLockedValue { $0 }) / Double(pages * moveCount),
            moves: samples.withLockedValue { $0 }, status: statusSamples, cpuPercent: cpu,
            rss: (before, peak, Proc.rss(pid)), floodSent: floodSent)
    }

    private func waitUntil(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }
}

/// `status` on the control socket every 20 ms until stopped; each call on a new connection.
final class StatusPoller: Sendable {
    private let path: String
    private let state = NIOLockedValueBox(
        (
            running: true,
            samples: Histogram<UInt64>(
                lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three
            )
        ))
    private let done = DispatchSemaphore(value: 0)

    init(path: String) {
        self.path = path
    }

    func start() {
        Thread.detachNewThread { [self] in
            while state.withLockedValue({ $0.running }) {
                let started = Row.now()
                if let client = try? ControlClient(path: path),
                    (try? client.callRaw(.status)) != nil
                {
                    let took = Row.now() - started
                    state.withLockedValue { _ = $0.samples.record(took) }
                }
                usleep(20_000)
            }
            done.signal()
        }
    }

    func stop() -> Histogram<UInt64> {
        state.withLockedValue { $0.running = false }
        done.wait()
        return state.withLockedValue { $0.samples }
    }
}

/// The daemon's numbers from /proc.
enum Proc {
    /// Resident memory in KB.
    static func rss(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// CPU time used so far, user and system, in seconds.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14 and stime 15 (1-based), so 11 and 12 here.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
