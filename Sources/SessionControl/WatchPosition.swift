import Foundation

/// Where a watcher stands in the daemon's events: the run and the number of the last event it took, so that when it
/// connects again it asks for what came after (``request``) and gets every event once. A plain value: the watcher
/// hands it the reply to each `watch` (``subscribed(_:)``) and each line after it (``took(_:)``).
public struct WatchPosition: Hashable, Sendable {
    /// The daemon's run the number is of; nil until a reply said it (or the watcher was told).
    public private(set) var run: String?
    /// The number of the last event taken; nil before the first reply, when the watcher asked for none.
    public private(set) var seq: UInt64?

    /// A watcher that starts after event `since` of run `run` (both nil: from now on).
    public init(run: String? = nil, since: UInt64? = nil) {
        self.run = run
        self.seq = since
    }

    /// The request that resumes after the last event taken; a plain `watch` before any number is known.
    public var request: ControlCommand {
        .watch(since: seq, run: seq == nil ? nil : run)
    }

    /// Takes the reply to `watch`: the run, and, when the watcher had no number, the last event before it. A reply
    /// of another run than the number's starts the count afresh: what that run holds comes next, from its first.
    public mutating func subscribed(_ result: WatchResult) {
        if seq == nil {
            seq = result.seq
        } else if let run, run != result.run {
            seq = 0
        }
        run = result.run
    }

    /// Takes a line after the reply; returns how many numbers it skipped after the last (0 when none, or for a line
    /// without a number: `eventsMissed` says the count itself).
    @discardableResult
    public mutating func took(_ line: Data) -> UInt64 {
        guard let number = WatchResult.sequenceNumber(of: line) else { return 0 }
        defer { seq = number }
        guard let seq, number > seq + 1 else { return 0 }
        return number - seq - 1
    }
}
