import NIOCore
import WireCodec

/// Invitations as the core carries them out: ``Invitations``' answers on links, a decline taken, the application's
/// own invitations of peers.
extension SessionCore: InvitationsDelegate {
    func invitee(on link: Link) -> Invitations.Invitee? {
        guard let peer = peers.peer(of: link) else { return nil }
        return Invitations.Invitee(
            peer: peer.id, name: peer.name, isMember: peer.everConnected || peer.isConnected,
            seatsTaken: peers.seatsTaken(besides: peer.id))
    }

    func carryOut(_ answer: Invitations.Answer, on link: Link) {
        switch answer {
        case .accept:
            perform(link.step { $0.accept(token: links.newToken()) }, on: link)
        case .refuse(let reason, let detail):
            gate.refuse(link, hello: link.hello, reason: reason, detail)
        case .decline(let reason):
            logger.debug("declining \(link.hello?.displayName ?? "a peer"): \(reason)")
            perform(link.step { $0.decline(reason) }, on: link)
        case .drop(let reason):
            drop(link, reason)
        }
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
        guard let peer = peers[id], id != localPeer else { return loop.makeFailedFuture(peers.unknownPeer(id)) }
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
