import Logging
import NIOCore
import WireCodec

/// What ``PathKeeper`` asks of the core: facts about peers and links, and the effects it cannot carry out itself (the
/// links' actions, what is published, the datagram route, the dials).
protocol PathKeeperDelegate: AnyObject, SendableMetatype {
    /// Whether the session runs now (started, not stopping).
    var isRunningNow: Bool { get }
    /// The link the path selector would make `peer`'s active one now, if it should change.
    func pathToActivate(for peer: PeerRecord, now: NIODeadline) -> Link?
    /// Whether `peer` is still the record of its id (not forgotten and made anew).
    func isCurrent(_ peer: PeerRecord) -> Bool
    /// Whether another link to `id` on `path` is in its handshake.
    func hasHandshakeUnderWay(on path: PathKey, for id: PeerID, besides link: Link) -> Bool
    /// Whether `peer` is redialled when lost.
    func canRedial(_ peer: PeerRecord) -> Bool
    /// Carries out a link's actions.
    func perform(_ actions: [LinkStateMachine.Action], on link: Link)
    /// Closes `link`, ignoring whatever it still delivers.
    func close(_ link: Link, reason: String)
    /// Tells the subscribers what became of `link` (closed, or its role changed).
    func publishLink(_ link: Link, of peer: PeerRecord, closed: Bool)
    /// Tells the subscribers `peer`'s state, if it changed.
    func publishState(of peer: PeerRecord)
    /// `link` (nil: none) carries `id`'s datagrams from now on.
    func activeLinkChanged(of id: PeerID, to link: Link?)
    /// Both sides resumed on `link`: what the peer missed is resent, and a first activation connects it.
    func resumed(on link: Link, of peer: PeerRecord, outcome: ReliableChannel.ResumeOutcome)
    /// `link` is no longer one of `peer`'s.
    func detached(_ link: Link, from peer: PeerRecord)
    /// `peer` was lost (connected before, or not): the subscribers hear it, and it is redialled as need be.
    func lost(_ peer: PeerRecord, wasConnected: Bool)
    /// Dials what `id` is missing.
    func reconcile(_ id: PeerID)
    /// `peer` restarted (another incarnation): its links of before are gone; its reliable channel starts over.
    func restarted(_ peer: PeerRecord)
}

/// Which of a peer's links carries its traffic, and what becomes of the peer when one goes: ready links stand by,
/// the pair's leader (the lower peer id) activates one, the follower answers, and a peer whose last link goes is
/// lost (and redialled) unless a replacement or a handshake under way takes over within the liveness timeout.
///
/// The peers and their links are the ``PeerTable``'s; this carries out activations and failovers on them, and asks
/// its delegate (the core, through a concrete type) for the rest.
final class PathKeeper<Delegate: PathKeeperDelegate> {
    private let localPeer: PeerID
    private let livenessTimeout: TimeAmount
    private let loop: any EventLoop
    private let logger: Logger
    weak var delegate: Delegate?

    init(localPeer: PeerID, livenessTimeout: TimeAmount, loop: any EventLoop, logger: Logger) {
        self.localPeer = localPeer
        self.livenessTimeout = livenessTimeout
        self.loop = loop
        self.logger = logger
    }

    /// What becomes of a peer once one of its links is taken away.
    enum AfterDetach: Hashable {
        /// Another handshaken link carries on, or a replacement in its handshake does: the path that went is
        /// redialled.
        case carryOn
        /// The peer replaced the link, or another is in its handshake: the peer is lost only if no link is handshaken
        /// within the liveness timeout.
        case awaitHandshake
        /// Nothing carries the peer's traffic: it is lost (and redialled) or, if it left, gone.
        case lose
        /// The peer was not connected and still has links in their handshakes: they are redialled as need be.
        case redial

        /// Decides it from what is left: handshaken links, whether a replacement took the link's place, whether the
        /// peer replaced it or another link is in its handshake on its path, whether the peer was connected, and
        /// whether any link is left at all.
        init(
            handshakenLinksLeft: Bool, replaced: Bool, replacedByPeer: Bool, handshakeUnderWay: Bool,
            connected: Bool, linksLeft: Bool
        ) {
            if handshakenLinksLeft || replaced {
                self = .carryOn
            } else if (replacedByPeer || handshakeUnderWay) && connected {
                self = .awaitHandshake
            } else if linksLeft && !connected {
                self = .redial
            } else {
                self = .lose
            }
        }
    }

    /// A hello of `peer`'s was admitted on `link` (`restarted`: of another incarnation than before): the links of the
    /// earlier incarnation go, one on the same path is arbitrated (``LinkArbiter``), and `link` becomes one of the
    /// peer's. False when `link` is refused as a duplicate.
    func admit(_ link: Link, to peer: PeerRecord, restarted: Bool) -> Bool {
        guard let delegate else { return false }
        if restarted {
            for old in Array(peer.links.values) where old !== link {
                delegate.perform(old.step { $0.leave(.replaced) }, on: old)
                detach(old, from: peer)
            }
            delegate.restarted(peer)
        }
        // One link per path: two on the same path (both dialled at once, or a redial before the old link was seen to
        // die) keep the one dialled by the lower peer id; between two of the same dialer, the newer one.
        if let existing = peer.otherLink(on: link.path, besides: link) {
            switch LinkArbiter.verdict(local: localPeer, peer: peer.id, newRole: link.role, oldRole: existing.role) {
            case .refuseNew(let keeping):
                logger.debug("duplicate link to \(peer.name) on \(link.path): keeping the one dialled by \(keeping)")
                delegate.perform(link.step { $0.refuse(.duplicateLink, "duplicate link") }, on: link)
                return false
            case .replaceOld:
                logger.debug("duplicate link to \(peer.name) on \(link.path): replacing the older one")
                // The new link first, then the old one detached as replaced, and only then closed: closing a channel
                // on its loop reports it inactive at once, and a link closed while still one of the peer's would lose
                // a connected peer to its own replacement.
                peer.add(link)
                detach(existing, from: peer, replacedBy: link)
                delegate.perform(existing.step { $0.leave(.replaced) }, on: existing)
            }
        }
        peer.add(link)
        return true
    }

    /// Whether this side chooses the active link of the pair: the lower peer id does.
    func isLeader(of peer: PeerID) -> Bool { localPeer < peer }

    /// Leader: keeps the best path active, switching when the active one died or went silent, or when a clearly
    /// better one has proved itself.
    func choosePath(for peer: PeerRecord, now: NIODeadline = .now()) {
        guard isLeader(of: peer.id), let delegate, delegate.isRunningNow else { return }
        guard let chosen = delegate.pathToActivate(for: peer, now: now) else { return }
        if let previous = peer.active, previous !== chosen { standBy(previous, of: peer) }
        activate(chosen, of: peer)
        let resume = peer.withReliable { $0.makeResume() }
        delegate.perform(chosen.step { $0.activate(resume) }, on: chosen)
    }

    /// Follower: the leader made `link` the active one; answer, resend what it missed, and use it from now on.
    func activatedByPeer(_ link: Link, of peer: PeerRecord, resume: Resume) {
        guard !isLeader(of: peer.id) else {
            // A late answer to an activation this side has moved on from; only its acknowledgement counts.
            peer.withReliable { $0.peerAcknowledged(resume.received) }
            return
        }
        if let previous = peer.active, previous !== link { standBy(previous, of: peer) }
        activate(link, of: peer)
        let ours = peer.withReliable { $0.makeResume() }
        delegate?.perform(link.step { $0.respond(ours) }, on: link)
        delegate?.resumed(on: link, of: peer, outcome: peer.withReliable { $0.peerResumed(resume) })
    }

    /// Leader: the follower answered the activation of `link`.
    func activationAnswered(_ link: Link, of peer: PeerRecord, resume: Resume) {
        guard peer.active === link else { return }
        delegate?.resumed(on: link, of: peer, outcome: peer.withReliable { $0.peerResumed(resume) })
    }

    private func standBy(_ previous: Link, of peer: PeerRecord) {
        previous.step { $0.deactivate() }
        if previous.isOpen { delegate?.publishLink(previous, of: peer, closed: false) }
    }

    /// `link` carries `peer`'s data from now on; its datagrams go with its token and keys.
    private func activate(_ link: Link, of peer: PeerRecord) {
        peer.activate(link)
        delegate?.activeLinkChanged(of: peer.id, to: link)
    }

    /// Takes `link` away from `peer` (closed or replaced): another path takes over, or the peer is lost. A link
    /// replaced by a duplicate on its path (`replacedBy`, in its handshake) does not lose a connected peer: the
    /// replacement becomes active when ready, and the peer is lost only if it closes first.
    func detach(_ link: Link, from peer: PeerRecord, replacedBy replacement: Link? = nil) {
        guard let delegate else { return }
        let wasActive = peer.active === link
        guard peer.remove(link) else { return }
        delegate.publishLink(link, of: peer, closed: true)
        delegate.detached(link, from: peer)
        if wasActive {
            delegate.activeLinkChanged(of: peer.id, to: nil)
            choosePath(for: peer)
        }
        let replaced = replacement.map { $0.isOpen && peer.links[ObjectIdentifier($0)] === $0 } ?? false
        if let replacement, replaced, peer.handshakenLinks.isEmpty {
            // The replacement must be ready within the liveness timeout, or the peer is lost after all.
            let bound = NIOLoopBound((keeper: self, link: replacement), eventLoop: loop)
            loop.scheduleTask(in: livenessTimeout) {
                let (keeper, link) = bound.value
                guard link.isOpen, !link.machine.isHandshaken else { return }
                keeper.delegate?.close(link, reason: "the replacing link did not complete its handshake in time")
            }
        }
        let after = AfterDetach(
            handshakenLinksLeft: !peer.handshakenLinks.isEmpty, replaced: replaced,
            replacedByPeer: link.replacedByPeer,
            handshakeUnderWay: delegate.hasHandshakeUnderWay(on: link.path, for: peer.id, besides: link),
            connected: peer.state == .connected, linksLeft: !peer.links.isEmpty)
        switch after {
        case .carryOn, .redial:
            delegate.reconcile(peer.id)  // the path that went is redialled; the peer stays connected meanwhile
        case .awaitHandshake:
            // The peer replaced this link by another on its path whose handshake has not reached this side yet (the
            // two dialled each other at once; its bye can even be lost to a reset), or such a link is in its
            // handshake: the peer is lost only if no link is handshaken within the liveness timeout.
            let bound = NIOLoopBound((keeper: self, peer: peer), eventLoop: loop)
            loop.scheduleTask(in: livenessTimeout) {
                let (keeper, peer) = bound.value
                guard let delegate = keeper.delegate, delegate.isCurrent(peer), peer.state == .connected,
                    peer.handshakenLinks.isEmpty
                else { return }
                keeper.lose(peer)
            }
            delegate.reconcile(peer.id)
        case .lose:
            lose(peer)
        }
    }

    /// `peer` has no link left that carries its traffic: it is lost (and redialled) or, if it left, gone.
    private func lose(_ peer: PeerRecord) {
        guard let delegate else { return }
        let wasConnected = peer.state == .connected
        peer.lost(redialling: delegate.canRedial(peer))
        delegate.activeLinkChanged(of: peer.id, to: nil)
        delegate.lost(peer, wasConnected: wasConnected)
    }
}
