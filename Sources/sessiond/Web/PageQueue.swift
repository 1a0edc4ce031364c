/// What waits to go to the pages, coalesced: the latest state of each thing a page shows (each bubble, the counter,
/// the peers, the pairings, the layout, the round trips) replaces an earlier one still waiting, so that however many
/// events happen, at most one item per thing waits. A bubble's state, its holder, the counter and the peers are never
/// lost; positions in between may be. Refusals are kept in order, the last ``maxErrors`` only.
struct PageQueue<Item> {
    typealias Kind = PageMessage.Kind

    /// Refusals kept for a page that does not read, at most.
    static var maxErrors: Int { 16 }

    private enum Key: Hashable {
        case state(Kind)
        case error(UInt64)
    }

    private var order: [Key] = []
    private var latest: [Key: Item] = [:]
    private var errors: [UInt64] = []
    private var nextError: UInt64 = 0

    var isEmpty: Bool { order.isEmpty }

    /// Queues `item`, the state of `kind`, in place of the one of the same kind that waits.
    mutating func put(_ item: Item, as kind: Kind) {
        let key: Key
        if kind == .error {
            key = .error(nextError)
            errors.append(nextError)
            nextError += 1
            if errors.count > Self.maxErrors {
                let oldest = Key.error(errors.removeFirst())
                latest[oldest] = nil
                order.removeAll { $0 == oldest }
            }
        } else {
            key = .state(kind)
        }
        if latest.updateValue(item, forKey: key) == nil { order.append(key) }
    }

    /// Everything waiting, in the order each thing first changed; the queue is then empty.
    mutating func take() -> [Item] {
        let items = order.compactMap { latest[$0] }
        order.removeAll(keepingCapacity: true)
        latest.removeAll(keepingCapacity: true)
        errors.removeAll()
        return items
    }
}

extension PageMessage {
    /// What a message is the state of.
    enum Kind: Hashable, Sendable {
        case snapshot, bubble(Int), counter, peers, pairings, layout, rtt, error
    }

    /// What this message is the state of.
    var kind: Kind {
        switch self {
        case .snapshot: .snapshot
        case .bubble(let bubble): .bubble(bubble.view)
        case .counter: .counter
        case .peers: .peers
        case .pairings: .pairings
        case .layout: .layout
        case .rtt: .rtt
        case .error: .error
        }
    }
}
