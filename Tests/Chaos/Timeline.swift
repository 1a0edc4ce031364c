import Synchronization

/// When each host's daemon was down (from its kill -9 to its restart) and when one of the tool's listeners on a host
/// (its `watch` or `streams` connection) was away: what may explain a payload that never arrived.
final class Timeline: Sendable {
    enum Kind: Sendable, Equatable {
        /// The daemon, from kill -9 until it was started again.
        case daemonDown
        /// The `watch` connection, from its loss (or an `eventsMissed`) until it is connected again.
        case watcherAway
        /// The `streams` connection, from its loss until it is connected again.
        case streamListenerAway
    }

    private struct Span {
        var kind: Kind
        var host: Int
        var from: ContinuousClock.Instant
        var to: ContinuousClock.Instant?
    }

    private let spans = Mutex<[Span]>([])

    /// Opens a span of `kind` on `host` now, unless one is open already.
    func begin(_ kind: Kind, host: Int, at instant: ContinuousClock.Instant = .now) {
        spans.withLock { spans in
            guard !spans.contains(where: { $0.kind == kind && $0.host == host && $0.to == nil }) else { return }
            spans.append(Span(kind: kind, host: host, from: instant))
        }
    }

    /// Closes the open span of `kind` on `host`, if any.
    func end(_ kind: Kind, host: Int, at instant: ContinuousClock.Instant = .now) {
        spans.withLock { spans in
            if let index = spans.lastIndex(where: { $0.kind == kind && $0.host == host && $0.to == nil }) {
                spans[index].to = instant
            }
        }
    }

    /// A span of `kind` on `host` that started within `from...to`.
    func started(_ kind: Kind, host: Int, within from: ContinuousClock.Instant, _ to: ContinuousClock.Instant) -> Bool {
        spans.withLock { spans in
            spans.contains { $0.kind == kind && $0.host == host && $0.from >= from && $0.from <= to }
        }
    }

    /// The spans of `kind` on `host` that started within `from...to`, with their ends (nil: still open).
    func spans(
        _ kind: Kind, host: Int, startingWithin from: ContinuousClock.Instant, _ to: ContinuousClock.Instant
    ) -> [(from: ContinuousClock.Instant, to: ContinuousClock.Instant?)] {
        spans.withLock { spans in
            spans.filter { $0.kind == kind && $0.host == host && $0.from >= from && $0.from <= to }.map {
                ($0.from, $0.to)
            }
        }
    }

    /// A span of `kind` on `host` that overlaps `from...to` (an open span lasts until now).
    func overlaps(_ kind: Kind, host: Int, _ from: ContinuousClock.Instant, _ to: ContinuousClock.Instant) -> Bool {
        let now = ContinuousClock.now
        return spans.withLock { spans in
            spans.contains { $0.kind == kind && $0.host == host && $0.from <= to && ($0.to ?? now) >= from }
        }
    }
}
