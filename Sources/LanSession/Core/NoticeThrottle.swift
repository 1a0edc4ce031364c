/// How many of each notice a flood could repeat were seen, and which are passed on: the first ten of a kind, then
/// every thousandth. A plain value.
struct NoticeThrottle {
    enum Kind: Hashable {
        /// Links closed for what they sent.
        case rejectedLink
        /// Handshakes refused for the secret.
        case refusedHandshake
        /// Replay buffers that overflowed.
        case replayOverflow
        /// Devices that are not paired, held as strangers.
        case stranger
    }

    private var counts: [Kind: Int] = [:]

    /// Counts one more of `kind`: how many so far, and whether this one is passed on.
    mutating func count(_ kind: Kind) -> (count: Int, report: Bool) {
        counts[kind, default: 0] += 1
        let count = counts[kind]!
        return (count, Self.isReported(count))
    }

    /// Whether the `count`th of a kind is passed on.
    static func isReported(_ count: Int) -> Bool {
        count <= 10 || count.isMultiple(of: 1_000)
    }
}
