import LanSession
import NIOCore
import NIOPosix
import WireCodec

/// The original iPhone apps as one application of a session, on the session's event loop: a replicated counter
/// ("N times"), three bubbles that one player at a time picks up, moves and drops, and the players' layout.
///
/// It talks to the session only through its `ApplicationContext`: messages of its kinds in, membership changes,
/// sends out; its events go to its own ``EventFanout``. ``BubblesAndCounterApp`` is its face for other threads.
final class BubblesAndCounterCore: SessionApplication {
    unowned let context: any ApplicationContext
    let configuration: BubblesAndCounterApp.Configuration
    let events: EventFanout<BubblesAndCounterEvent>
    var replica: CounterReplica
    /// Increments wait for the one before them to be saved and sent, so that a failed save never leaves a later
    /// increment counting the failed one.
    var incrementTail: EventLoopFuture<Void>
    /// Increments of ``increment(by:savingTo:)`` not yet saved and sent (or failed): while there are any, an
    /// ``incrementNow(by:savingTo:)`` would overtake them.
    var incrementsWaiting = 0
    /// The local count is to be sent at the end of this turn of the loop (see ``commitIncrement(to:)``).
    var localCountSendScheduled = false
    /// Increments made without a hop to the loop (no count store), folded into the replica by the loop; the
    /// ``BubblesAndCounterApp`` adds to it.
    let localIncrements: LocalIncrements
    var lastCounterExchange = NIODeadline.now()
    var bubbles = BubbleBoard()
    /// A late joiner adopting a member's board: that member, and the bubbles it has not told yet. A board is adopted
    /// whole, from the first member that tells it.
    var adopting: (peer: PeerID, views: Set<UInt8>)?
    var moveSequence = [UInt16](repeating: 0, count: BubbleBoard.count)
    var layout: PlayerLayout

    init(
        context: any ApplicationContext, configuration: BubblesAndCounterApp.Configuration,
        localIncrements: LocalIncrements, events: EventFanout<BubblesAndCounterEvent>
    ) {
        self.context = context
        self.configuration = configuration
        self.events = events
        self.replica = CounterReplica(local: context.localPeer, counts: configuration.initialCounts)
        self.localIncrements = localIncrements
        self.incrementTail = context.eventLoop.makeSucceededVoidFuture()
        self.layout = PlayerLayout(members: [context.localPeer])
    }

    var localPeer: PeerID { context.localPeer }
    var loop: any EventLoop { context.eventLoop }

    /// The replicated counter. Increments made off the loop count once folded (``foldLocalIncrements()``).
    var counter: GCounter { replica.counter }

    // MARK: - SessionApplication

    let applicationKinds = BubblesAndCounterMessage.kindBytes

    func received(_ message: Message, from peer: PeerID, reliably: Bool) throws(WireError) {
        guard let message = try BubblesAndCounterMessage(message) else {
            context.logger.debug("ignoring \(message.kind) from \(context.name(of: peer))")
            return
        }
        // Only moves travel unreliably (docs/wire-format.md, section 11.6); the rest must come in order, exactly once.
        if !reliably, message.kind != .move {
            context.logger.debug("ignoring \(message.kind) from \(context.name(of: peer)) in a datagram")
            return
        }
        switch message {
        case .handshake, .negotiate, .negotiateConfirm:
            // The original app's greeting repeats the hello's name; player indexes follow from membership.
            break
        case .layout(let entries):
            if PlayerLayout(entries: entries) != layout {
                context.logger.debug("layout from \(context.name(of: peer)) differs from ours while membership settles")
            }
        case .counterIncrement(let count):
            receivedIncrement(count, from: peer)
        case .counterState(let entries):
            receivedCounterState(entries, from: peer)
        case .pickUp(let view):
            events.yield(.pickUp(view: view, by: peer))
            if layout.coordinator == localPeer { grant(view, to: peer) }
        case .bubbleState(let state):
            // The coordinator's word; or, while this board is pristine (a late joiner), the whole board of the first
            // member that tells it.
            if bubbles.isPristine && layout.coordinator != peer {
                adopting = (peer, Set((0..<UInt8(BubbleBoard.count)).filter { $0 != state.view }))
            } else if let adoption = adopting, adoption.peer == peer, adoption.views.contains(state.view) {
                adopting?.views.remove(state.view)
                if adopting?.views.isEmpty == true { adopting = nil }
            } else if layout.coordinator != peer {
                context.logger.debug(
                    "ignoring bubble state from \(context.name(of: peer)), which is not the coordinator")
                return
            }
            let previous = bubbles.bubbles[Int(min(state.view, UInt8(BubbleBoard.count - 1)))].holder
            if bubbles.apply(state), previous != state.holder {
                events.yield(.holder(view: state.view, holder: state.holder))
            }
        case .move(let move):
            if bubbles.apply(move, from: peer) {
                events.yield(.move(view: move.view, x: move.x, y: move.y, by: peer))
            }
        case .drop(let drop):
            if bubbles.apply(drop, from: peer) {
                events.yield(.drop(view: drop.view, x: drop.x, y: drop.y, by: peer))
                events.yield(.holder(view: drop.view, holder: nil))
                announceReleased(drop.view)
            }
        }
    }

    func peerConnected(_ peer: PeerID) {
        // The original app's greeting, then the counts the peer may lack, for merging.
        send(.handshake(peerName: context.displayName), to: peer)
        exchangeCounter(with: peer)
        let changed = relayout()  // as coordinator, a changed layout went to everyone
        if !changed { sendShared(to: peer) } else { sendBoard(to: peer) }
    }

    /// Sends `peer` what this member holds of the shared state: the layout, as coordinator, and the board.
    private func sendShared(to peer: PeerID) {
        if layout.coordinator == localPeer { send(.layout(layout.entries), to: peer) }
        sendBoard(to: peer)
    }

    /// Every member tells a newcomer its board (a pristine one says nothing new): a late joiner sees the bubbles as
    /// they are, held, moved or dropped, whoever coordinates.
    private func sendBoard(to peer: PeerID) {
        guard !bubbles.isPristine else { return }
        for index in 0..<BubbleBoard.count {
            send(.bubbleState(bubbles.state(UInt8(index))), to: peer)
        }
    }

    func membershipChanged() {
        relayout()
    }

    func peerRestarted(_ peer: PeerID) {
        replica.forget(peer)  // what it held died with its process
    }

    func peerMissedMessages(_ peer: PeerID) {
        // What it was not sent is held back for good: send it the whole state again.
        replica.forget(peer)  // the counts, on the next exchange
        sendShared(to: peer)
    }

    func tick(now: NIODeadline) {
        exchangeCounters(now: now)
    }

    func sessionStopped() {
        events.finish()
    }

    // MARK: - Layout

    /// Recomputes the layout from the connected peers; the coordinator announces it and takes over arbitration.
    /// Returns whether it changed.
    @discardableResult
    func relayout() -> Bool {
        let connected = context.connectedPeers
        let newLayout = PlayerLayout(members: connected + [localPeer])
        guard newLayout != layout else { return false }
        let previousCoordinator = layout.coordinator
        layout = newLayout
        events.yield(.layout(newLayout.indexes))
        guard newLayout.coordinator == localPeer else { return true }
        sendToConnectedPeers(.layout(newLayout.entries), reliably: true)
        // As coordinator, free the bubbles of peers that are gone and tell everyone where every bubble stands.
        let present = Set(connected + [localPeer])
        var changed = false
        for index in 0..<BubbleBoard.count {
            if let holder = bubbles.bubbles[index].holder, !present.contains(holder) {
                _ = bubbles.release(heldBy: holder)
                events.yield(.holder(view: UInt8(index), holder: nil))
                changed = true
            }
        }
        // A pristine board (this peer just joined) is not announced: the members' boards stand, and the first one
        // that reaches this peer becomes its own.
        if (changed || previousCoordinator != localPeer) && !bubbles.isPristine {
            for index in 0..<BubbleBoard.count {
                sendToConnectedPeers(.bubbleState(bubbles.state(UInt8(index))), reliably: true)
            }
        }
        return true
    }
}
