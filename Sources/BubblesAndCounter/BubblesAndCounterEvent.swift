import LanSession

/// Something that happened to the counter or the bubbles; see ``BubblesAndCounterApp/subscribe(bufferSize:)``.
public enum BubblesAndCounterEvent: Hashable, Sendable, CustomStringConvertible {
    /// A counter changed: `peer`'s count, and the total.
    case counter(PeerID, count: UInt64, total: UInt64)
    /// A pick-up was requested by `peer`.
    case pickUp(view: UInt8, by: PeerID)
    /// A bubble's holder changed (nil: free), as decided by the coordinator.
    case holder(view: UInt8, holder: PeerID?)
    /// A bubble moved.
    case move(view: UInt8, x: Float, y: Float, by: PeerID)
    /// A bubble was dropped.
    case drop(view: UInt8, x: Float, y: Float, by: PeerID)
    /// The player indexes changed.
    case layout([PeerID: Int])
    /// A peer holds a count for this peer above this peer's own, which only its own increments raise: ignored. This
    /// peer's count was lost (a state directory restored from a backup, say) and its next increments count again.
    case countClaimedAbove(by: PeerID, claimed: UInt64, local: UInt64)
    /// This subscriber fell behind: so many events were not kept for it. Read the state afresh.
    case eventsMissed(Int)

    /// The event as one line for people, e.g. `counter: 000000000000002a at 3, total 5`.
    public var description: String {
        switch self {
        case .counter(let peer, let count, let total): "counter: \(peer) at \(count), total \(total)"
        case .pickUp(let view, let peer): "bubble \(view): \(peer) asks to pick it up"
        case .holder(let view, let holder): "bubble \(view): " + (holder.map { "held by \($0)" } ?? "free")
        case .move(let view, let x, let y, let peer): "bubble \(view) moved to (\(x), \(y)) by \(peer)"
        case .drop(let view, let x, let y, let peer): "bubble \(view) dropped at (\(x), \(y)) by \(peer)"
        case .layout(let indexes):
            "layout: " + indexes.sorted { $0.value < $1.value }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        case .countClaimedAbove(let peer, let claimed, let local):
            "\(peer) holds \(claimed) for this peer, which counted \(local): ignored"
        case .eventsMissed(let count): "\(count) events missed (this reader fell behind)"
        }
    }
}
