import NIOCore

/// Chooses which of a peer's handshaken links carries its data, as a plain value with explicit times.
///
/// Used by the pair's leader. A link is healthy while something arrived on it within `silence`. The best healthy
/// link is the one of the most preferred transport, then the lowest round-trip time. An unhealthy (or missing)
/// active link is replaced at once by the best healthy one; a healthy one only by a link that is clearly better — a
/// more preferred transport, or under half the round-trip time — and that has been up for `hysteresis`, so that a
/// path that just came back proves itself before it carries traffic, and two similar paths do not take turns.
struct PathSelector {
    /// Transport names, most preferred first; other transports come after, in name order.
    var priority: [String]
    /// A link silent for this long is not healthy.
    var silence: TimeAmount
    /// A better link must have been up this long before it replaces a healthy active one.
    var hysteresis: TimeAmount

    /// What the selector knows of one link.
    struct Candidate: Equatable {
        var id: ObjectIdentifier
        var transport: String
        var rtt: TimeAmount?
        var readySince: NIODeadline
        var lastReceived: NIODeadline
    }

    enum Decision: Equatable {
        /// Leave the active link as it is (or, without any healthy link, wait).
        case keep
        /// Make this link the active one.
        case activate(ObjectIdentifier)
    }

    func rank(_ transport: String) -> Int {
        priority.firstIndex(of: transport) ?? priority.count
    }

    func isHealthy(_ candidate: Candidate, at now: NIODeadline) -> Bool {
        now - candidate.lastReceived < silence
    }

    func decide(active: ObjectIdentifier?, candidates: [Candidate], now: NIODeadline) -> Decision {
        let healthy = candidates.filter { isHealthy($0, at: now) }
        guard
            let best = healthy.min(by: { a, b in
                (rank(a.transport), a.rtt?.nanoseconds ?? .max, a.readySince.uptimeNanoseconds, a.transport)
                    < (rank(b.transport), b.rtt?.nanoseconds ?? .max, b.readySince.uptimeNanoseconds, b.transport)
            })
        else { return .keep }
        guard let active, let current = healthy.first(where: { $0.id == active }) else {
            return .activate(best.id)  // none, or the active one went silent or away
        }
        guard best.id != current.id, now - best.readySince >= hysteresis else { return .keep }
        if rank(best.transport) < rank(current.transport) { return .activate(best.id) }
        if rank(best.transport) == rank(current.transport), let fast = best.rtt, let slow = current.rtt,
            fast.nanoseconds * 2 < slow.nanoseconds
        {
            return .activate(best.id)
        }
        return .keep
    }
}
