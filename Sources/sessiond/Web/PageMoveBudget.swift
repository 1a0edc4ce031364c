/// How fast one page's moves (or other operations) are taken: a bucket of `capacity` that refills one every
/// `interval`. The page itself sends at most one move every 4 ms, and a burst that the network delivered at once fits
/// in the bucket; a page that sends faster for longer (a flood) is held to the rate (`PageInboundBudget`), so that it
/// cannot keep the daemon busy for the others. A plain value: the time comes in.
struct PageMoveBudget {
    static let capacity = 50
    static let interval: Duration = .milliseconds(4)

    private var tokens = Double(Self.capacity)
    private var last: ContinuousClock.Instant?

    /// Whether a move that arrived at `now` is taken.
    mutating func take(at now: ContinuousClock.Instant) -> Bool {
        if let last {
            tokens = min(Double(Self.capacity), tokens + (now - last) / Self.interval)
        }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
