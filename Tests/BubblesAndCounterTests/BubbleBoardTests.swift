import BubblesAndCounter
import LanSession
import Testing
import WireCodec

@Suite("BubbleBoard")
struct BubbleBoardTests {
    let a = PeerID(1)
    let b = PeerID(2)

    @Test("the coordinator grants a free bubble to the first request only")
    func grants() {
        var board = BubbleBoard()
        let first = board.request(1, by: a)
        let second = board.request(1, by: b)
        let invalid = board.request(7, by: b)
        #expect(first == BubbleState(view: 1, holder: a, x: 160, y: 200))
        #expect(second == nil)
        #expect(invalid == nil)
        #expect(board.bubbles[1].holder == a)
    }

    @Test("only the holder's newer moves apply, across the 16-bit wrap")
    func moves() {
        var board = BubbleBoard()
        _ = board.request(0, by: a)
        let applied = [
            board.apply(Move(view: 0, x: 1, y: 1, sequence: 65_534), from: a),
            board.apply(Move(view: 0, x: 9, y: 9, sequence: 3), from: b),  // not the holder
            board.apply(Move(view: 0, x: 2, y: 2, sequence: 1), from: a),  // wrapped, newer
            board.apply(Move(view: 0, x: 3, y: 3, sequence: 65_535), from: a),  // older than 1
            board.apply(Move(view: 0, x: 3, y: 3, sequence: 1), from: a),  // a duplicate
        ]
        #expect(applied == [true, false, true, false, false])
        #expect(board.bubbles[0].x == 2 && board.bubbles[0].y == 2)
    }

    @Test("the holder's drop releases the bubble where it lands; others' drops do nothing")
    func drops() {
        var board = BubbleBoard()
        _ = board.request(2, by: a)
        let byOther = board.apply(Drop(view: 2, x: 5, y: 5), from: b)
        let byHolder = board.apply(Drop(view: 2, x: 6, y: 7), from: a)
        #expect(!byOther)
        #expect(byHolder)
        #expect(board.bubbles[2].holder == nil && board.bubbles[2].x == 6 && board.bubbles[2].y == 7)
        let again = board.request(2, by: b)
        #expect(again != nil, "free again")
    }

    @Test("a lost holder's bubbles are released")
    func release() {
        var board = BubbleBoard()
        _ = board.request(0, by: a)
        _ = board.request(1, by: b)
        _ = board.request(2, by: a)
        let released = board.release(heldBy: a)
        #expect(released.map(\.view) == [0, 2])
        #expect(board.bubbles.map(\.holder) == [nil, b, nil])
    }

    @Test("everyone applies the coordinator's word, which resets move ordering on a new holder")
    func coordinatorState() {
        var board = BubbleBoard()
        let results = [
            board.apply(BubbleState(view: 0, holder: a, x: 1, y: 2)),
            board.apply(Move(view: 0, x: 3, y: 4, sequence: 10), from: a),
            board.apply(BubbleState(view: 0, holder: b, x: 3, y: 4)),
            board.apply(Move(view: 0, x: 5, y: 6, sequence: 1), from: b),  // b's moves count on their own
            board.apply(BubbleState(view: 0, holder: b, x: 5, y: 6)),  // nothing changed
        ]
        #expect(results == [true, true, true, true, false])
    }

    @Test("a board is pristine until anything happens to it: a state applied, a grant, a move, a drop, a release")
    func pristine() {
        #expect(BubbleBoard().isPristine)
        var applied = BubbleBoard()
        applied.apply(BubbleState(view: 0, holder: nil, x: 50, y: 0))
        #expect(!applied.isPristine, "an adopted state, even the same, ends the pristine board")
        var granted = BubbleBoard()
        _ = granted.request(1, by: PeerID(5))
        #expect(!granted.isPristine)
        var refused = BubbleBoard()
        _ = refused.apply(Move(view: 0, x: 1, y: 1, sequence: 1), from: PeerID(5))
        _ = refused.apply(Drop(view: 0, x: 1, y: 1), from: PeerID(5))
        _ = refused.release(heldBy: PeerID(5))
        #expect(refused.isPristine, "moves and drops of a peer that holds nothing change nothing")
    }
}
