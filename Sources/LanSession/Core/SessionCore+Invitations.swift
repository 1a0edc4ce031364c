import NIOCore
import WireCodec

/// Invitations as the core carries them out: a dialer's invitation answered as ``Admission`` says (or as the
/// application decides), a decline taken, the application's own invitations of peers (``Invitations``).
extension SessionCore {
    /// Acceptor: the dialer's invitation arrived; a member coming back is not asked again, the rest as the policy
    /// says while there is room.
    func consider(_ invitation: Invitation, on link: Link) {
        guard let peer = peers.peer(of: link) else {
            return perform(link.step { $0.drop("invitation from nobody") }, on: link)
        }
        let verdict = admission.consider(
            invitation, isMember: peer.everConnected || peer.isConnected, seatsTaken: seatsTaken(besides: peer.id))
        switch verdict {
        case .accept:
            accept(link)
        case .full(let detail):
            refuse(link, hello: link.hello, reason: .full, detail)
        case .ask(let wait):
            let bound = NIOLoopBound(self, eventLoop: loop)
            let request = invitations.ask(
                link: link, peer: peer.id, name: peer.name, context: invitation.context, wait: wait
            ) { id in
                _ = bound.value.answer(id, decision: .decline(.timedOut))
            }
            events.yield(.invitation(request))
        }
    }

    /// Members besides `peer`, and peers accepted whose link is not active yet: the seats taken (docs/wire-format.md,
    /// section 11.2), so that two invitations at once do not both take the last seat.
    private func seatsTaken(besides peer: PeerID) -> Int {
        peers.all.reduce(0) { seats, other in
            other.id != peer && (other.isMember || !other.handshakenLinks.isEmpty) ? seats + 1 : seats
        }
    }

    /// Answers a pending invitation; false when there is no such invitation (answered, timed out, or gone).
    @discardableResult
    func answer(_ id: UInt64, decision: InvitationDecision) -> Bool {
        guard let pending = invitations.take(id) else { return false }
        let link = pending.link
        guard link.isOpen, peers.peer(of: link) != nil else { return false }
        switch decision {
        case .accept:
            guard let peer = link.peerID, admission.hasSeat(seatsTaken: seatsTaken(besides: peer)) else {
                refuse(link, hello: link.hello, reason: .full, "the session is full (\(configuration.maxPeers) peers)")
                return true
            }
            accept(link)
        case .decline(let reason):
            logger.debug("declining \(link.hello?.displayName ?? "a peer"): \(reason)")
            events.yield(.declined(link.peerID, address: link.remoteDescription, reason: reason))
            perform(link.step { $0.decline(reason) }, on: link)
        }
        return true
    }

    func accept(_ link: Link) {
        perform(link.step { $0.accept(token: links.newToken()) }, on: link)
    }

    /// The peer declined on `link`: a duplicate on its path is no news; the rest ends the application's invitation,
    /// and a refusal that will not change by itself stops the redials.
    func declined(_ reason: DeclineReason, on link: Link) {
        guard reason != .duplicateLink else {  // the peer keeps another link on this path
            link.replacedOnPeersSide()
            return
        }
        logger.debug("\(link.hello?.displayName ?? link.remoteDescription) declined: \(reason)")
        events.yield(.declined(link.peerID, address: link.remoteDescription, reason: reason))
        if let peer = peers.peer(of: link) {
            peer.notConnected(.declined(reason))
            endInvite(
                of: peer, SessionError(.declined, "\(peer.name.isEmpty ? "\(peer.id)" : peer.name) declined: \(reason)")
            )
            if reason == .versionMismatch || reason == .wrongSession || reason == .rejected {
                // A refusal that will not change by itself: stop redialling until the peer shows up anew.
                peer.leave(nil)
            }
        }
        if let endpoint = link.endpoint, reason == .versionMismatch || reason == .wrongSession {
            dialler.removeStatic(endpoint)
        }
    }

    /// The application invites `id`: dial it with `context`; succeeds once it accepted, fails when it declines or
    /// does not answer within `timeout`.
    func invite(_ id: PeerID, context: [UInt8], timeout: Duration) -> EventLoopFuture<Void> {
        guard context.count <= Wire.maxInvitationContextLength else {
            return loop.makeFailedFuture(
                SessionError(
                    .invalidArgument, "an invitation's context is at most \(Wire.maxInvitationContextLength) bytes"))
        }
        guard timeout > .zero else {
            return loop.makeFailedFuture(SessionError(.invalidArgument, "an invitation's timeout must be positive"))
        }
        guard let peer = peers[id], id != localPeer else {
            let known = peers.all.map { "\($0.name.isEmpty ? "?" : $0.name) (\($0.id))" }.sorted()
            return loop.makeFailedFuture(
                SessionError(
                    .noSuchPeer,
                    "\(id) is not known (discover it, or connect to its address); known: "
                        + (known.isEmpty ? "none" : known.joined(separator: ", "))))
        }
        if peer.isConnected { return loop.makeSucceededVoidFuture() }
        let promise = loop.makePromise(of: Void.self)
        let bound = NIOLoopBound(self, eventLoop: loop)
        let name = peer.name.isEmpty ? "\(id)" : peer.name
        invitations.invite(id, context: context, timeout: timeout, promise: promise) {
            let core = bound.value
            guard let peer = core.peers[id] else { return }
            core.endInvite(of: peer, SessionError(.timedOut, "\(name) did not accept within \(timeout)"))
        }
        peer.showsUpAgain()
        peer.notConnected(nil)
        dialler.reconcile(id)
        return promise.futureResult
    }

    /// The application's invitation of `peer` is answered: accepted (`error` nil), declined, or timed out. A peer
    /// nothing else makes this side dial is no longer dialled.
    func endInvite(of peer: PeerRecord, _ error: SessionError?) {
        guard invitations.end(peer.id, error), error != nil, !wantsLink(to: peer), !dialler.isStatic(peer.id) else {
            return
        }
        dialler.stopDialling(peer.id)
        for link in Array(peer.links.values) where link.isOpen && !link.machine.isHandshaken {
            perform(link.step { $0.drop("the invitation ended") }, on: link)
        }
    }

    /// Whether this side dials `peer`: always with automatic invitations; otherwise a member, or a peer the
    /// application invites (or a peer a static endpoint led to: the dialler knows those itself).
    func wantsLink(to peer: PeerRecord) -> Bool {
        if let toPair = trust.dialsOnlyToPair(peer.id) { return toPair }  // an untrusted device: only to ask it to pair
        return configuration.invitesDiscoveredPeers || peer.everConnected || invitations.invitation(of: peer.id) != nil
    }
}
