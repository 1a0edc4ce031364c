import NIOCore

/// The last events of the daemon's run as `watch` writes them, numbered: each line the `EventHub` encodes gets the
/// next number (``nextSeq``, from 1) and is kept here, the last ``maxLines`` of them and ``maxBytes`` in all, so that a
/// watcher that comes back (``replay(since:run:)``) gets what it missed exactly once, or is told exactly how many
/// events it missed. A plain value, on the hub's loop.
struct EventHistory {
    /// Lines kept, at most.
    static let maxLines = 10_000
    /// Bytes of lines kept, at most (a replay is written at once: this bounds it as the watcher's writer bounds
    /// what waits for a client).
    static let maxBytes = WatchWriter.maxWaitingBytes

    /// What a watcher that asked for the events after a number gets before the live ones.
    struct Replay: Equatable {
        /// Events it will never see: those after its number the history no longer holds (of this run's, when the run
        /// is another); nil when it misses none.
        var missed: UInt64?
        /// The number was of another run of the daemon (or of none this run had): what that run had after it is gone.
        var restarted = false
        /// The lines after the number, oldest first.
        var lines: [ByteBuffer] = []
    }

    /// This run of the daemon: a random id, new at each start.
    let run: String
    private let maxLines: Int
    private let maxBytes: Int
    /// The number of the last event; 0 before the first.
    private(set) var lastSeq: UInt64 = 0
    private var lines = CircularBuffer<ByteBuffer>()
    /// Bytes of the lines kept.
    private(set) var bytes = 0

    /// A history of the run `run`, keeping at most `maxLines` lines and `maxBytes` bytes (the newest line is kept
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

    /// The number of the oldest line kept (``nextSeq`` when none is).
    var firstSeq: UInt64 { nextSeq - UInt64(lines.count) }

    /// Lines kept.
    var count: Int { lines.count }

    /// Keeps `line`, the event numbered ``nextSeq``, letting the oldest go past the bounds.
    mutating func append(_ line: ByteBuffer) {
        lastSeq += 1
        lines.append(line)
        bytes += line.readableBytes
        while lines.count > maxLines || (bytes > maxBytes && lines.count > 1) {
            bytes -= lines.removeFirst().readableBytes
        }
    }

    /// What a watcher gets before the live events: nothing without `since`; the lines after `since` when it is of this
    /// run (`run` nil or this run's) and the history holds them all; otherwise every line held, after the count of
    /// those it missed. A number past this run's last is another run's.
    func replay(since: UInt64?, run: String?) -> Replay {
        guard let since else { return Replay() }
        guard (run ?? self.run) == self.run, since <= lastSeq else {
            return Replay(missed: firstSeq - 1, restarted: true, lines: Array(lines))
        }
        if since + 1 >= firstSeq {
            return Replay(lines: Array(lines[lines.index(lines.startIndex, offsetBy: Int(since + 1 - firstSeq))...]))
        }
        return Replay(missed: firstSeq - 1 - since, lines: Array(lines))
    }
}
