import Foundation

/// `watch`: which run of the daemon the events' numbers belong to, and the number of the last event before the
/// subscription (the events after it come live; those up to it, after `since`, from the history first).
public struct WatchResult: Codable, Hashable, Sendable {
    /// The daemon's run: a random id, new at each start. Numbers of another run are not this one's.
    public var run: String
    /// The number of the last event the daemon had when the watcher subscribed; 0 when none yet.
    public var seq: UInt64

    public init(run: String, seq: UInt64) {
        self.run = run
        self.seq = seq
    }

    /// The number (`seq`) of an event line of `watch`; nil for a line without one (`eventsMissed`) or not an event.
    public static func sequenceNumber(of line: Data) -> UInt64? {
        try? JSONDecoder().decode(Numbered.self, from: line).seq
    }

    private struct Numbered: Decodable {
        var seq: UInt64?
    }
}
