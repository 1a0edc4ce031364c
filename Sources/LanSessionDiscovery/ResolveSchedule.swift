import LanSession
import WireCodec

/// Which advertisements of peers to resolve, and when; ``SessionDiscovery`` carries out its answers. A plain value.
///
/// A resolve is not free: avahi-daemon queries the instance's SRV, TXT and address records, and every avahi-daemon on
/// the link handles those queries. When 32 nodes start together and each resolves the other 31, the avahi-daemons of
/// the link spend more CPU than the whole start takes. Yet a node that is connected to a few peers learns the others'
/// endpoints from their `members`, and the instance name tells which peer an advertisement is. So a node resolves
/// what it cannot reach otherwise, a few at a time:
/// - a peer nothing else tells about (not connected, no endpoint known) is resolved as the budget allows: a burst of
///   ``burst`` at once, then one per ``refill``;
/// - a peer whose endpoints are known (from `members`, a static peer, an earlier link) but that is not connected is
///   resolved after ``knownGrace``: the endpoints may be stale or unreachable from here;
/// - a connected peer is not resolved while it stays connected, unless it is advertised on more than one interface:
///   then it is resolved after ``pathGrace``, to find its other paths;
/// - an advertisement whose name names no peer (another program's, an older version's) is resolved at once.
///
/// Once resolved, an advertisement leaves the schedule; it comes back only when it was withdrawn and appears anew.
struct ResolveSchedule {
    typealias Reach = PeerReach

    /// An advertisement waiting to be resolved.
    struct Entry: Equatable {
        /// The peer its name names; nil when the name names none.
        var peer: PeerID?
        /// The distinct interfaces it is sighted on.
        var interfaces: Int
        /// Since when it is sighted.
        var since: ContinuousClock.Instant
        /// Since when its peer is known and not connected.
        var knownSince: ContinuousClock.Instant?
        /// How its peer could be reached at the last look.
        var reach = Reach.unknown
    }

    /// Resolves that may start at once.
    static let burst = 3
    /// After the burst, one more resolve per this long.
    static let refill: Duration = .milliseconds(250)
    /// A peer known and not connected for this long is resolved.
    static let knownGrace: Duration = .seconds(2)
    /// A connected peer sighted on several interfaces is resolved after this long.
    static let pathGrace: Duration = .seconds(1)

    /// The advertisements waiting, oldest first.
    private(set) var waiting: [(name: String, entry: Entry)] = []
    /// When one of them is due next if no peer's reach changes meanwhile (as of the last ``due(now:reach:)``); nil
    /// when none is, or none waits: the connected peers wait until they are not connected any more.
    private(set) var nextCheck: ContinuousClock.Instant?
    private var tokens: Double
    private var refilledAt: ContinuousClock.Instant

    init(now: ContinuousClock.Instant) {
        tokens = Double(Self.burst)
        refilledAt = now
    }

    /// The peers of the waiting advertisements.
    var waitingPeers: Set<PeerID> { Set(waiting.compactMap(\.entry.peer)) }

    /// An advertisement was sighted, or sighted on one more interface.
    mutating func sighted(_ name: String, peer: PeerID?, interfaces: Int, now: ContinuousClock.Instant) {
        if let index = waiting.firstIndex(where: { $0.name == name }) {
            waiting[index].entry.interfaces = interfaces
            waiting[index].entry.peer = peer
        } else {
            waiting.append((name, Entry(peer: peer, interfaces: interfaces, since: now)))
        }
    }

    /// An advertisement was withdrawn.
    mutating func removed(_ name: String) {
        waiting.removeAll { $0.name == name }
    }

    /// The advertisements to resolve now, given how each waiting peer can be reached; they leave the schedule.
    mutating func due(now: ContinuousClock.Instant, reach: (PeerID) -> Reach) -> [String] {
        let elapsed = now - refilledAt
        if elapsed > .zero {
            tokens = min(Double(Self.burst), tokens + elapsed / Self.refill)
            refilledAt = now
        }
        var resolve: [String] = []
        var kept: [(name: String, entry: Entry)] = []
        for (name, var entry) in waiting {
            let isDue: Bool
            if let peer = entry.peer {
                entry.reach = reach(peer)
                switch entry.reach {
                case .connected:
                    entry.knownSince = nil
                    isDue = entry.interfaces > 1 && now - entry.since >= Self.pathGrace && tokens >= 1
                case .known:
                    let since = entry.knownSince ?? now
                    entry.knownSince = since
                    isDue = now - since >= Self.knownGrace && tokens >= 1
                case .unknown:
                    entry.knownSince = nil
                    isDue = tokens >= 1
                }
                if isDue { tokens -= 1 }
            } else {
                isDue = true
            }
            if isDue { resolve.append(name) } else { kept.append((name, entry)) }
        }
        waiting = kept
        // When a token is there again, and so when each kept entry (each names a peer: the others were due) is due
        // at the earliest if its peer stays as reachable as now.
        let token = tokens >= 1 ? now : now + Self.refill * (1 - tokens)
        nextCheck = kept.compactMap { _, entry -> ContinuousClock.Instant? in
            switch entry.reach {
            case .connected: entry.interfaces > 1 ? max(entry.since + Self.pathGrace, token) : nil
            case .known: max((entry.knownSince ?? now) + Self.knownGrace, token)
            case .unknown: token
            }
        }.min()
        return resolve
    }
}
