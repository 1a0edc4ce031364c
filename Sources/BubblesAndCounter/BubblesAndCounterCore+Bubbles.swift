import LanSession
import WireCodec

/// The bubbles: pick-ups arbitrated by the coordinator, moves from the holder, drops.
extension BubblesAndCounterCore {
    /// Coordinator: grants `view` to `peer` if it is free, and tells everyone.
    func grant(_ view: UInt8, to id: PeerID) {
        guard let state = bubbles.request(view, by: id) else { return }
        events.yield(.holder(view: view, holder: id))
        sendToConnectedPeers(.bubbleState(state), reliably: true)
    }

    /// Asks for a bubble: granted at once when this peer coordinates, otherwise when the coordinator says so.
    func pickUp(_ view: UInt8) throws(SessionError) {
        guard BubbleBoard.isValid(view) else { throw SessionError(.invalidArgument, "no bubble \(view)") }
        events.yield(.pickUp(view: view, by: localPeer))
        if layout.coordinator == localPeer {
            grant(view, to: localPeer)
        }
        sendToConnectedPeers(.pickUp(view: view), reliably: true)
    }

    /// Moves a bubble this peer holds; the move goes unreliably to every connected peer.
    func move(_ view: UInt8, x: Float, y: Float) throws(SessionError) {
        guard BubbleBoard.isValid(view) else { throw SessionError(.invalidArgument, "no bubble \(view)") }
        guard x.isFinite, y.isFinite else { throw SessionError(.invalidArgument, "coordinates must be finite") }
        guard bubbles.bubbles[Int(view)].holder == localPeer else {
            throw SessionError(.invalidArgument, "bubble \(view) is not held by this peer")
        }
        moveSequence[Int(view)] &+= 1
        let move = Move(view: view, x: x, y: y, sequence: moveSequence[Int(view)])
        _ = bubbles.apply(move, from: localPeer)
        events.yield(.move(view: view, x: x, y: y, by: localPeer))
        sendToConnectedPeers(.move(move), reliably: false)
    }

    /// Drops a bubble this peer holds at its final position; the drop goes reliably to everyone.
    func drop(_ view: UInt8, x: Float, y: Float) throws(SessionError) {
        guard BubbleBoard.isValid(view) else { throw SessionError(.invalidArgument, "no bubble \(view)") }
        guard x.isFinite, y.isFinite else { throw SessionError(.invalidArgument, "coordinates must be finite") }
        let drop = Drop(view: view, x: x, y: y)
        guard bubbles.apply(drop, from: localPeer) else {
            throw SessionError(.invalidArgument, "bubble \(view) is not held by this peer")
        }
        events.yield(.drop(view: view, x: x, y: y, by: localPeer))
        events.yield(.holder(view: view, holder: nil))
        sendToMembers(.drop(drop))
        announceReleased(view)
    }

    /// How moves reach `peer` changed: what the lost datagrams carried, the position of each bubble this peer holds,
    /// goes to it once more, reliably, so that it does not show a stale position until the next move.
    func unreliableRouteChanged(_ peer: PeerID, to route: UnreliableRoute) {
        for index in 0..<BubbleBoard.count where bubbles.bubbles[index].holder == localPeer {
            moveSequence[index] &+= 1
            let bubble = bubbles.bubbles[index]
            let move = Move(view: UInt8(index), x: bubble.x, y: bubble.y, sequence: moveSequence[index])
            _ = bubbles.apply(move, from: localPeer)
            send(.move(move), to: peer)
        }
    }

    /// Coordinator: a bubble was dropped; every member hears it is free, and where, from the coordinator too (one
    /// that missed the holder's `drop` still learns it).
    func announceReleased(_ view: UInt8) {
        guard layout.coordinator == localPeer else { return }
        sendToConnectedPeers(.bubbleState(bubbles.state(view)), reliably: true)
    }
}
