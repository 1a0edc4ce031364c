import Foundation
import NIOCore
import SessionControl

/// The last events of the daemon's run, numbered: each event the `EventHub` takes gets the next number (``nextSeq``,
/// from 1) and is kept here, the last ``maxLines`` of them and ``maxBytes`` in all, so that a watcher that comes back
/// (``replay(since:run:)``) gets what it missed exactly once, or is told exactly how many events it missed. An event
/// is kept as the line `watch` wrote when a watcher was there to write it to; otherwise as the event and its time, to
/// be encoded only if a watcher asks for it (what an event costs while nobody watches is so no encoding). A plain
/// value, on the hub's loop.
struct EventHistory {
    /// One event kept.
    enum Entry: Equatable {
        /// As it was written, with its newline.
        case line(ByteBuffer)
        /// Not written yet: the event, and when the daemon saw it. Boxed: an event inline is as large as the largest
        /// (a transfer's), some 300 bytes, and a full history of small ones (a count) would hold 10,000 of those.
        indirect case event(ControlEvent, at: Date)

        /// The bytes it counts for: a line's; about what an event's line will be.
        var size: Int {
            switch self {
            case .line(let line): line.readableBytes
            case .event(.data(_, let data, _), _): 256 + 3 * data.count  // base64, and the text when it is UTF-8
            case .event: 256
            }
        }
    }

    /// Events kept, at most.
    static let maxLines = 10_000
    /// Bytes of events kept, at most (``Entry/size``; a replay is written at once: this bounds it as the watcher's writer bounds
    /// what waits for a client).
    static let maxBytes = WatchWriter.maxWaitingBytes

    /// What a watcher that asked for the events after a number gets before the live ones.
    struct Replay: Equatable {
        /// Events it will never see: those after its number the history no longer holds (of this run's, when the run
        /// is another); nil when it misses none.
        var missed: UInt64?
        /// The number was of another run of the daemon (or of none this run had): what that run had after it is gone.
        var restarted = false
        /// The events after the number that are held, oldest first, from number ``firstSeq``.
        var entries: [Entry] = []
        var firstSeq: UInt64 = 1
    }

    /// This run of the daemon: a random id, new at each start.
    let run: String
    private let maxLines: Int
    private let maxBytes: Int
    /// The number of the last event; 0 before the first.
    private(set) var lastSeq: UInt64 = 0
    private var entries = CircularBuffer<Entry>()
    /// Bytes of the events kept (``Entry/size``).
    private(set) var bytes = 0

    /// A history of the run `run`, keeping at most `maxLines` events and `maxBytes` bytes (the newest event is kept
    /// whatever its size).
    init(run: String, maxLines: Int = EventHistory.maxLines, maxBytes: Int = EventHistory.maxBytes) {
        self.run = run
        self.maxLines = max(1, maxLines)
        self.maxBytes = maxBytes
    }

    /// A new run id: 16 hex digits.
    static func newRun() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The number the next event gets.
    var nextSeq: UInt64 { lastSeq + 1 }

    /// The number of the oldest event kept (``nextSeq`` when none is).
    var firstSeq: UInt64 { nextSeq - UInt64(entries.count) }

    /// Events kept.
    var count: Int { entries.count }

    /// Keeps `entry`, the event numbered ``nextSeq``, letting the oldest go past the bounds.
    mutating func append(_ entry: Entry) {
        lastSeq += 1
        entries.append(entry)
        bytes += entry.size
        while entries.count > maxLines || (bytes > maxBytes && entries.count > 1) {
            bytes -= entries.removeFirst().size
        }
    }

    /// What a watcher gets before the live events: nothing without `since`; the events after `since` when it is of
    /// this run (`run` nil or this run's) and the history holds them all; otherwise every event held, after the count
    /// of those it missed. A number past this run's last is another run's.
    func replay(since: UInt64?, run: String?) -> Replay {
        guard let since else { return Replay(firstSeq: nextSeq) }
        guard (run ?? self.run) == self.run, since <= lastSeq else {
            return Replay(missed: firstSeq - 1, restarted: true, entries: Array(entries), firstSeq: firstSeq)
        }
        if since + 1 >= firstSeq {
            let start = entries.index(entries.startIndex, offsetBy: Int(since + 1 - firstSeq))
            return Replay(entries: Array(entries[start...]), firstSeq: since + 1)
        }
        return Replay(missed: firstSeq - 1 - since, entries: Array(entries), firstSeq: firstSeq)
    }
}
