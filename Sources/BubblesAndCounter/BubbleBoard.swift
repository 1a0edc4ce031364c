import WireCodec

/// The three bubbles of the original app, replicated: who holds each one and where it is.
///
/// The coordinator (player index 0) arbitrates: it grants a free bubble to the first `pickUp` it sees and announces
/// the holder with `bubbleState`; everyone takes holders from the coordinator only, so all peers agree. Only the
/// holder's moves apply, newer ones only (per-bubble serial numbers); its drop releases the bubble. A plain value.
public struct BubbleBoard: Hashable, Sendable {
    /// One bubble.
    public struct Bubble: Hashable, Sendable {
        /// Who holds it, if anybody.
        public var holder: PeerID?
        /// Its centre.
        public var x: Float
        /// Its centre.
        public var y: Float
        /// Sequence number of the last move applied, while held.
        public var lastMove: UInt16?
    }

    /// How many bubbles there are.
    public static let count = 3

    /// The bubbles, by view number.
    public private(set) var bubbles: [Bubble]
    /// Nothing happened to the board since its start: no state of another peer applied, no bubble picked up, moved,
    /// dropped or freed. A pristine board is the same on every peer, so it is worth telling no one; a pristine peer (a
    /// late joiner) adopts the board any member tells it.
    public private(set) var isPristine = true

    /// Where each bubble starts, its centre on the apps' 320 × 480 point board: a column down the middle, each bubble
    /// (50, 100 and 150 points across) whole inside the board and clear of the others. (The original app's column at
    /// x 50, 50 points apart, put the first bubble half above the board and the third past its left edge.)
    public static let startingPlaces: [(x: Float, y: Float)] = [(160, 80), (160, 200), (160, 360)]

    /// Bubbles at their starting places.
    public init() {
        bubbles = Self.startingPlaces.map { Bubble(holder: nil, x: $0.x, y: $0.y) }
    }

    /// Whether `view` names a bubble.
    public static func isValid(_ view: UInt8) -> Bool { Int(view) < count }

    /// The wire state of bubble `view`.
    public func state(_ view: UInt8) -> BubbleState {
        let bubble = bubbles[Int(view)]
        return BubbleState(view: view, holder: bubble.holder, x: bubble.x, y: bubble.y)
    }

    /// Coordinator: `peer` asks for `view`. Returns the new state to announce if granted, nil if the bubble is held
    /// (or `view` is not a bubble).
    public mutating func request(_ view: UInt8, by peer: PeerID) -> BubbleState? {
        guard Self.isValid(view), bubbles[Int(view)].holder == nil else { return nil }
        isPristine = false
        bubbles[Int(view)].holder = peer
        bubbles[Int(view)].lastMove = nil
        return state(view)
    }

    /// Everyone: the coordinator's word on a bubble. Returns whether anything changed.
    @discardableResult
    public mutating func apply(_ state: BubbleState) -> Bool {
        guard Self.isValid(state.view) else { return false }
        isPristine = false
        let index = Int(state.view)
        let before = bubbles[index]
        if before.holder != state.holder { bubbles[index].lastMove = nil }
        bubbles[index].holder = state.holder
        bubbles[index].x = state.x
        bubbles[index].y = state.y
        return bubbles[index] != before
    }

    /// A move from `peer`: applied if `peer` holds the bubble and the move is newer than the last one applied.
    public mutating func apply(_ move: Move, from peer: PeerID) -> Bool {
        guard Self.isValid(move.view) else { return false }
        let index = Int(move.view)
        guard bubbles[index].holder == peer else { return false }
        if let last = bubbles[index].lastMove, !Move.isNewer(move.sequence, than: last) { return false }
        isPristine = false
        bubbles[index].lastMove = move.sequence
        bubbles[index].x = move.x
        bubbles[index].y = move.y
        return true
    }

    /// A drop from `peer`: if it holds the bubble, the bubble is released at the drop's position.
    public mutating func apply(_ drop: Drop, from peer: PeerID) -> Bool {
        guard Self.isValid(drop.view), bubbles[Int(drop.view)].holder == peer else { return false }
        let index = Int(drop.view)
        isPristine = false
        bubbles[index].holder = nil
        bubbles[index].lastMove = nil
        bubbles[index].x = drop.x
        bubbles[index].y = drop.y
        return true
    }

    /// Releases every bubble `peer` holds (it was lost); returns their new states.
    public mutating func release(heldBy peer: PeerID) -> [BubbleState] {
        var released: [BubbleState] = []
        for index in bubbles.indices where bubbles[index].holder == peer {
            isPristine = false
            bubbles[index].holder = nil
            bubbles[index].lastMove = nil
            released.append(state(UInt8(index)))
        }
        return released
    }
}
