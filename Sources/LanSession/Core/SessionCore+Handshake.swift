import NIOCore
import WireCodec

/// A link's handshake as the core carries it out: the hello checked, with a secret the proof, the link made one of
/// its peer's, the invitation answered.
extension SessionCore {
    /// A hello arrived on `link`: refused (another version or session), dropped (this very peer), or on to the proof
    /// (with a secret) or the invitation.
    func identify(_ hello: Hello, on link: Link) {
        link.hello = hello
        guard hello.protocolVersion == Wire.protocolVersion else {
            return refuse(
                link, hello: hello, reason: .versionMismatch,
                "protocol version \(hello.protocolVersion), this peer speaks \(Wire.protocolVersion)")
        }
        guard hello.sessionName == configuration.sessionName else {
            return refuse(
                link, hello: hello, reason: .wrongSession,
                "session \"\(hello.sessionName)\", this peer is in \"\(configuration.sessionName)\"")
        }
        guard hello.peerID != localPeer, hello.peerID.rawValue != 0 else {
            if let endpoint = link.endpoint { dialler.forgetEndpoint(endpoint) }
            return perform(link.machine.drop("this is ourselves"), on: link)
        }
        if let security = link.security {
            guard hello.authenticationKey != nil else {
                failedAuthentications += 1
                return refuse(
                    link, hello: hello, reason: .authenticationFailed, "it has no secret; this session requires one")
            }
            let proof: [UInt8]
            do {
                proof = try security.derive(remoteHello: hello)
            } catch {
                failedAuthentications += 1
                return refuse(link, hello: hello, reason: .authenticationFailed, "\(error)")
            }
            return perform(link.machine.authenticate(proof: proof), on: link)
        }
        if hello.capabilities.contains(.authentication) || hello.authenticationKey != nil {
            return refuse(
                link, hello: hello, reason: .authenticationFailed, "it requires a secret; this session has none")
        }
        admit(hello, on: link)
    }

    /// With a secret: the peer's `auth` arrived; only a valid proof lets the link go on.
    func verify(_ proof: [UInt8], on link: Link) {
        guard let security = link.security, let hello = link.hello else {
            return perform(link.machine.drop("auth without a secret handshake"), on: link)
        }
        do {
            try security.verify(peerProof: proof)
        } catch {
            failedAuthentications += 1
            logger.debug(
                "authentication failed at \(link.remoteDescription) (it claims to be \(hello.peerID)): \(error) (\(failedAuthentications) failed handshakes so far)"
            )
            return perform(link.machine.drop("authentication failed"), on: link)
        }
        admit(hello, on: link)
    }

    /// The hello is admitted (with a secret, proved): the link becomes one of its peer's, and the invitation goes on.
    func admit(_ hello: Hello, on link: Link) {
        if let intended = link.intendedPeer, intended != hello.peerID {
            // The endpoint leads to another peer (a stale or forged record): a failed dial for the intended one.
            logger.debug("dialled \(link.remoteDescription) for \(intended), found \(hello.peerID)")
            if let endpoint = link.endpoint, peers[intended] != nil {
                dialler.disproved(endpoint, for: intended)
                dialler.dialEnded(endpoint, for: intended, failed: true)
            }
            link.intendedPeer = nil
        }
        let peer = peers.record(for: hello.peerID)
        peer.name = hello.displayName
        peer.capabilities = hello.capabilities
        if let endpoint = link.endpoint {
            link.provenEndpoint = endpoint
            dialler.staticEndpoint(endpoint, isPeer: peer.id)
        } else if let port = hello.listenPort, let address = link.channel.remoteAddress?.ipAddress {
            link.provenEndpoint = Endpoint(transport: link.transport.name, host: address, port: Int(port))
        }
        if let known = peer.incarnation, known != hello.incarnation {
            logger.debug("\(peer.name) restarted; its sequence numbers start over", metadata: ["peer": "\(peer.id)"])
            for old in Array(peer.links.values) where old !== link {
                perform(old.machine.leave(.replaced), on: old)
                detach(old, from: peer)
            }
            peer.reliable.peerRestarted()
            applications.forEach { $0.peerRestarted(peer.id) }
            streams.peerGone(peer.id, reason: "\(peer.name) restarted")
        }
        peer.incarnation = hello.incarnation

        // One link per path: two on the same path (both dialled at once, or a redial before the old link was seen to
        // die) keep the one dialled by the lower peer id; between two of the same dialer, the newer one.
        if let existing = peer.otherLink(on: link.path, besides: link) {
            let oldDialer = existing.role == .dialer ? localPeer : peer.id
            let newDialer = link.role == .dialer ? localPeer : peer.id
            if !LinkArbiter.keepsNewLink(local: localPeer, peer: peer.id, newDialer: newDialer, oldDialer: oldDialer) {
                logger.debug("duplicate link to \(peer.name) on \(link.path): keeping the one dialled by \(oldDialer)")
                return perform(link.machine.refuse(.duplicateLink, "duplicate link"), on: link)
            }
            logger.debug("duplicate link to \(peer.name) on \(link.path): replacing the older one")
            // The new link first, then the old one detached as replaced, and only then closed: closing a channel on
            // its loop reports it inactive at once, and a link closed while still one of the peer's would lose a
            // connected peer to its own replacement.
            peer.links[ObjectIdentifier(link)] = link
            detach(existing, from: peer, replacedBy: link)
            perform(existing.machine.leave(.replaced), on: existing)
        }
        peer.links[ObjectIdentifier(link)] = link
        peer.left = false
        if peer.state != .connected && peer.state != .connecting {
            peer.state = .connecting
            publishState(of: peer)
        }
        publishLink(link, of: peer)
        let invite = invitations.invitation(of: peer.id)
        perform(
            link.machine.admit(
                invitation: Invitation(
                    context: invite?.context ?? configuration.invitationContext,
                    timeoutMilliseconds: UInt32(
                        clamping: (invite?.timeout ?? configuration.invitationTimeout).nanoseconds / 1_000_000))),
            on: link)
    }

    /// Refuses the peer on `link` during the handshake, telling it why.
    func refuse(_ link: Link, hello: Hello?, reason: DeclineReason, _ detail: String) {
        if reason == .authenticationFailed {
            // Strangers: no event for the application (a flood must not flood it); counted in the statistics.
            let count = configuration.isEncrypted ? " (\(failedAuthentications) failed handshakes so far)" : ""
            logger.debug("refusing \(link.remoteDescription): \(detail)\(count)")
            return perform(link.machine.refuse(reason, detail), on: link)
        }
        logger.debug("refusing \(hello?.displayName ?? "a peer") at \(link.remoteDescription): \(detail)")
        events.yield(.declined(hello?.peerID, address: link.remoteDescription, reason: reason))
        perform(link.machine.refuse(reason, detail), on: link)
    }

    /// Acceptor: the dialer's invitation arrived; a member coming back is not asked again, the rest as the policy
    /// says while there is room.
    func consider(_ invitation: Invitation, on link: Link) {
        guard let peer = peers.peer(of: link) else {
            return perform(link.machine.drop("invitation from nobody"), on: link)
        }
        if peer.everConnected || peer.isConnected {
            return accept(link)  // a member coming back, or another path to one, is not asked again
        }
        guard seatsTaken(besides: peer.id) < configuration.maxPeers else {
            return refuse(
                link, hello: link.hello, reason: .full, "the session is full (\(configuration.maxPeers) peers)")
        }
        switch configuration.invitationPolicy {
        case .acceptAll:
            accept(link)
        case .ask:
            let bound = NIOLoopBound(self, eventLoop: loop)
            // The inviter's timeout when it is the shorter: it stops waiting then, and nothing stale stays listed.
            let wait = min(
                configuration.invitationTimeout.timeAmount,
                .milliseconds(Int64(max(1, invitation.timeoutMilliseconds))))
            let request = invitations.ask(
                link: link, peer: peer.id, name: peer.name, context: invitation.context, wait: wait
            ) { id in
                _ = bound.value.answer(id, decision: .decline(.timedOut))
            }
            events.yield(.invitation(request))
        }
    }

    /// Members besides `peer`: the seats taken.
    private func seatsTaken(besides peer: PeerID) -> Int {
        var seats = 0
        peers.forEachMember { if $0.id != peer { seats += 1 } }
        return seats
    }

    /// Answers a pending invitation; false when there is no such invitation (answered, timed out, or gone).
    @discardableResult
    func answer(_ id: UInt64, decision: InvitationDecision) -> Bool {
        guard let pending = invitations.take(id) else { return false }
        let link = pending.link
        guard link.isOpen, peers.peer(of: link) != nil else { return false }
        switch decision {
        case .accept:
            guard let peer = link.peerID, seatsTaken(besides: peer) < configuration.maxPeers else {
                refuse(link, hello: link.hello, reason: .full, "the session is full (\(configuration.maxPeers) peers)")
                return true
            }
            accept(link)
        case .decline(let reason):
            logger.debug("declining \(link.hello?.displayName ?? "a peer"): \(reason)")
            events.yield(.declined(link.peerID, address: link.remoteDescription, reason: reason))
            perform(link.machine.decline(reason), on: link)
        }
        return true
    }

    func accept(_ link: Link) {
        perform(link.machine.accept(token: links.newToken()), on: link)
    }

    /// The peer declined on `link`: a duplicate on its path is no news; the rest ends the application's invitation,
    /// and a refusal that will not change by itself stops the redials.
    func declined(_ reason: DeclineReason, on link: Link) {
        guard reason != .duplicateLink else {  // the peer keeps another link on this path
            link.replacedByPeer = true
            return
        }
        logger.debug("\(link.hello?.displayName ?? link.remoteDescription) declined: \(reason)")
        events.yield(.declined(link.peerID, address: link.remoteDescription, reason: reason))
        if let peer = peers.peer(of: link) {
            peer.notConnectedReason = .declined(reason)
            endInvite(
                of: peer, SessionError(.declined, "\(peer.name.isEmpty ? "\(peer.id)" : peer.name) declined: \(reason)")
            )
            if reason == .versionMismatch || reason == .wrongSession || reason == .rejected {
                // A refusal that will not change by itself: stop redialling until the peer shows up anew.
                peer.left = true
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
        peer.left = false
        peer.notConnectedReason = nil
        dialler.reconcile(id)
        return promise.futureResult
    }

    /// The application's invitation of `peer` is answered: accepted (`error` nil), declined, or timed out. A peer
    /// nothing else makes this side dial is no longer dialled.
    func endInvite(of peer: PeerRecord, _ error: SessionError?) {
        guard invitations.end(peer.id, error), error != nil, !wantsLink(to: peer) else { return }
        dialler.stopDialling(peer.id)
        for link in Array(peer.links.values) where link.isOpen && !link.machine.isHandshaken {
            perform(link.machine.drop("the invitation ended"), on: link)
        }
    }

    /// Whether this side dials `peer`: always with automatic invitations; otherwise a member, or a peer the
    /// application invites (a peer a static endpoint led to, the dialler knows of itself).
    func wantsLink(to peer: PeerRecord) -> Bool {
        configuration.invitesDiscoveredPeers || peer.everConnected || invitations.invitation(of: peer.id) != nil
    }
}
