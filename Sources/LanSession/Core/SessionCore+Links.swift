import NIOCore
import WireCodec

/// Links: carrying out what each link's state machine asks, and what spans a peer's links — identity, paths,
/// duplicates, the active link and failover.
extension SessionCore {
    /// A message arrived on `link`.
    func received(_ message: Message, on link: Link) {
        guard link.isOpen, runState == .running else { return }
        link.liveness.didReceive(at: .now())
        perform(link.machine.received(message), on: link)
    }

    /// Carries out a link's actions, in order.
    func perform(_ actions: [LinkStateMachine.Action], on link: Link) {
        for action in actions {
            switch action {
            case .send(let message):
                write(message, on: link)
            case .identify(let hello):
                identify(hello, on: link)
            case .startSealing:
                writePending(of: link)  // what was written before (the auth) goes in clear
                link.security?.startSealing()
            case .verify(let proof):
                verify(proof, on: link)
            case .consider(let invitation):
                consider(invitation, on: link)
            case .ready(let token):
                linkReady(link, token: token)
            case .activatedByPeer(let resume):
                activatedByPeer(link, resume: resume)
            case .activationAnswered(let resume):
                activationAnswered(link, resume: resume)
            case .deliver(let message):
                deliver(message, on: link)
            case .dropStale(let kind):
                logger.trace("dropping \(kind) on a standby link; it is resent on the active one")
            case .peerSaidBye(let reason, let handshaken):
                peerSaidBye(reason, handshaken: handshaken, on: link)
            case .declined(let reason):
                declined(reason, on: link)
            case .close(let reason):
                if reason.hasPrefix("bye") || reason.hasPrefix("declined") || reason.hasPrefix("invitation declined")
                    || peer(of: link) == nil  // a stranger: its refusals are logged (rate-limited) where they happen
                {
                    logger.debug("closing link \(link.remoteDescription): \(reason)")
                } else {
                    logger.notice("closing link \(link.remoteDescription): \(reason)")
                }
                writePending(of: link)  // a bye or a decline goes before the close
                link.channel.close(promise: nil)
            }
        }
    }

    /// The peer a link belongs to, once its hello was admitted and while it is one of the peer's links.
    func peer(of link: Link) -> PeerRecord? {
        guard let id = link.peerID, let peer = peers[id], peer.links[ObjectIdentifier(link)] === link else {
            return nil
        }
        return peer
    }

    // MARK: - Handshake

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
            if let endpoint = link.endpoint {
                staticEndpoints[endpoint] = nil
                for peer in peers.values { peer.lastSucceeded[endpoint] = nil }
            }
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
            if failedAuthentications <= 10 || failedAuthentications.isMultiple(of: 1_000) {
                logger.notice(
                    "authentication failed at \(link.remoteDescription) (it claims to be \(hello.peerID)): \(error) (\(failedAuthentications) failed handshakes so far)"
                )
            }
            return perform(link.machine.drop("authentication failed"), on: link)
        }
        admit(hello, on: link)
    }

    /// The hello is admitted (with a secret, proved): the link becomes one of its peer's, and the invitation goes on.
    func admit(_ hello: Hello, on link: Link) {
        if let intended = link.intendedPeer, intended != hello.peerID {
            // The endpoint leads to another peer (a stale or forged record): a failed dial for the intended one.
            logger.debug("dialled \(link.remoteDescription) for \(intended), found \(hello.peerID)")
            if let endpoint = link.endpoint, let peer = peers[intended] {
                peer.lastSucceeded[endpoint] = nil
                dialEnded(endpoint, for: peer, failed: true)
            }
            link.intendedPeer = nil
        }
        let peer = record(for: hello.peerID)
        peer.name = hello.displayName
        peer.capabilities = hello.capabilities
        if let endpoint = link.endpoint {
            link.provenEndpoint = endpoint
            if staticEndpoints[endpoint] != nil { staticEndpoints[endpoint] = .some(peer.id) }
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
            streamsEnded(with: peer, reason: "\(peer.name) restarted")
        }
        peer.incarnation = hello.incarnation

        // One link per path: two on the same path (both dialled at once, or a redial before the old link was seen to
        // die) keep the one dialled by the lower peer id; between two of the same dialer, the newer one.
        if let existing = peer.links.values.first(where: { $0 !== link && $0.path == link.path && $0.isOpen }) {
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
        perform(
            link.machine.admit(
                invitation: Invitation(
                    context: peer.invite?.context ?? configuration.invitationContext,
                    timeoutMilliseconds: UInt32(
                        clamping: (peer.invite?.timeout ?? configuration.invitationTimeout).nanoseconds / 1_000_000))),
            on: link)
    }

    func refuse(_ link: Link, hello: Hello?, reason: DeclineReason, _ detail: String) {
        if reason == .authenticationFailed {
            // Strangers: logged, rate-limited (a flood must not flood the log), and no event for the application.
            if failedAuthentications <= 10 || failedAuthentications.isMultiple(of: 1_000) {
                let count = configuration.isEncrypted ? " (\(failedAuthentications) failed handshakes so far)" : ""
                logger.notice("refusing \(link.remoteDescription): \(detail)\(count)")
            }
            return perform(link.machine.refuse(reason, detail), on: link)
        }
        logger.notice("refusing \(hello?.displayName ?? "a peer") at \(link.remoteDescription): \(detail)")
        events.yield(.declined(hello?.peerID, address: link.remoteDescription, reason: reason))
        perform(link.machine.refuse(reason, detail), on: link)
    }

    func consider(_ invitation: Invitation, on link: Link) {
        guard let peer = peer(of: link) else { return perform(link.machine.drop("invitation from nobody"), on: link) }
        if peer.everConnected || peer.isConnected {
            return accept(link)  // a member coming back, or another path to one, is not asked again
        }
        let seats = members.filter { $0.id != peer.id }.count
        if seats >= configuration.maxPeers {
            return refuse(
                link, hello: link.hello, reason: .full, "the session is full (\(configuration.maxPeers) peers)")
        }
        switch configuration.invitationPolicy {
        case .acceptAll:
            accept(link)
        case .ask:
            let request = InvitationRequest(
                id: nextInvitationID, peerID: peer.id, displayName: peer.name, context: invitation.context)
            nextInvitationID += 1
            let bound = NIOLoopBound(self, eventLoop: loop)
            // The inviter's timeout when it is the shorter: it stops waiting then, and nothing stale stays listed.
            let wait = min(
                configuration.invitationTimeout.timeAmount,
                .milliseconds(Int64(max(1, invitation.timeoutMilliseconds))))
            let timeout = loop.scheduleTask(in: wait) {
                _ = bound.value.answer(request.id, decision: .decline(.timedOut))
            }
            pendingInvitations[request.id] = PendingInvitation(link: link, request: request, timeout: timeout)
            events.yield(.invitation(request))
        }
    }

    /// Answers a pending invitation; false when there is no such invitation (answered, timed out, or gone).
    @discardableResult
    func answer(_ id: UInt64, decision: InvitationDecision) -> Bool {
        guard let pending = pendingInvitations.removeValue(forKey: id) else { return false }
        pending.timeout.cancel()
        let link = pending.link
        guard link.isOpen, peer(of: link) != nil else { return false }
        switch decision {
        case .accept:
            let seats = members.filter { $0.id != link.peerID }.count
            guard seats < configuration.maxPeers else {
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
        var token: UInt64 = 0
        repeat { token = UInt64.random(in: 1...UInt64.max) } while tokens[token] != nil
        perform(link.machine.accept(token: token), on: link)
    }

    func declined(_ reason: DeclineReason, on link: Link) {
        guard reason != .duplicateLink else {  // the peer keeps another link on this path
            link.replacedByPeer = true
            return
        }
        logger.debug("\(link.hello?.displayName ?? link.remoteDescription) declined: \(reason)")
        events.yield(.declined(link.peerID, address: link.remoteDescription, reason: reason))
        if let peer = peer(of: link) {
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
            staticEndpoints[endpoint] = nil
        }
    }

    // MARK: - Ready, active, standby

    /// The handshake completed both ways: a path to the peer, standing by until its leader activates it.
    func linkReady(_ link: Link, token: UInt64) {
        guard let peer = peer(of: link) else { return }
        link.readySince = .now()
        tokens[token] = link
        if let proven = link.provenEndpoint { peer.lastSucceeded[proven] = .now() }
        if let endpoint = link.endpoint { dialEnded(endpoint, for: peer, failed: false) }
        link.intendedPeer = nil
        write(.ping(Ping(nonce: 0, timestamp: nowMicros())), on: link)  // a first round-trip time at once
        publishLink(link, of: peer)
        logger.debug("link ready", metadata: ["peer": "\(peer.id)", "path": "\(link.path)"])
        if isLeader(of: peer) { choosePath(for: peer) }
    }

    /// Whether this side chooses the active link of the pair: the lower peer id does.
    func isLeader(of peer: PeerRecord) -> Bool { localPeer < peer.id }

    /// Leader: keeps the best path active, switching when the active one died or went silent, or when a clearly
    /// better one has proved itself.
    func choosePath(for peer: PeerRecord, now: NIODeadline = .now()) {
        guard isLeader(of: peer), runState == .running else { return }
        let candidates = peer.handshakenLinks.map { link in
            PathSelector.Candidate(
                id: ObjectIdentifier(link), transport: link.transport.name, rtt: link.rtt.smoothed,
                readySince: link.readySince ?? now, lastReceived: link.liveness.lastReceived)
        }
        let current = peer.active.map(ObjectIdentifier.init)
        guard case .activate(let id) = pathSelector.decide(active: current, candidates: candidates, now: now),
            let chosen = peer.links[id]
        else { return }
        if let previous = peer.active, previous !== chosen {
            logger.debug(
                "\(peer.name): moving traffic from \(previous.path) to \(chosen.path)",
                metadata: ["peer": "\(peer.id)"])
            previous.machine.deactivate()
            if previous.isOpen { publishLink(previous, of: peer) }
        }
        peer.active = chosen
        perform(chosen.machine.activate(peer.reliable.makeResume()), on: chosen)
    }

    /// Follower: the leader made `link` the active one; answer, resend what it missed, and use it from now on.
    func activatedByPeer(_ link: Link, resume: Resume) {
        guard let peer = peer(of: link) else { return }
        guard !isLeader(of: peer) else {
            // A late answer to an activation this side has moved on from; only its acknowledgement counts.
            peer.reliable.peerAcknowledged(resume.received)
            return
        }
        if let previous = peer.active, previous !== link {
            previous.machine.deactivate()
            if previous.isOpen { publishLink(previous, of: peer) }
        }
        peer.active = link
        perform(link.machine.respond(peer.reliable.makeResume()), on: link)
        activated(link, of: peer, outcome: peer.reliable.peerResumed(resume))
    }

    /// Leader: the follower answered the activation of `link`.
    func activationAnswered(_ link: Link, resume: Resume) {
        guard let peer = peer(of: link), peer.active === link else { return }
        activated(link, of: peer, outcome: peer.reliable.peerResumed(resume))
    }

    /// `link` carries the peer's data from now on: resend what the peer missed; a first activation connects it.
    func activated(_ link: Link, of peer: PeerRecord, outcome: ReliableChannel.ResumeOutcome) {
        let resend: ByteBuffer
        switch outcome {
        case .resend(let frames):
            resend = frames
        case .gap(let lost, let frames):
            resend = frames
            logger.warning(
                "\(lost) messages from \(peer.name) (\(peer.id)) were lost (its replay buffer overflowed); re-synchronising"
            )
            events.yield(.resynchronised(peer.id, lost: lost))
        }
        if resend.readableBytes > 0 {
            link.liveness.didSend(at: .now())
            writePending(of: link)  // the activation's resume goes first
            link.channel.writeAndFlush(resend, promise: nil)
        }
        reliableRoomFreed(peer)
        publishLink(link, of: peer)
        startDatagrams(for: peer, link: link)
        guard peer.state != .connected else {
            logger.debug("\(peer.name): traffic on \(link.path)", metadata: ["peer": "\(peer.id)"])
            publishState(of: peer)
            return
        }
        peer.state = .connected
        peer.everConnected = true
        endInvite(of: peer, nil)
        peer.left = false
        logger.debug(
            "connected to \(peer.name)", metadata: ["peer": "\(peer.id)", "link": "\(link.remoteDescription)"])
        events.yield(.peerConnected(peer.id, name: peer.name))
        publishState(of: peer)
        membersChanged()
        applications.forEach { $0.peerConnected(peer.id) }
    }

    // MARK: - Messages

    func deliver(_ message: Message, on link: Link) {
        switch message {
        case .ping(let ping):
            write(.pong(ping), on: link)
        case .pong(let pong):
            receivedPong(pong, on: link)
        case .ack(let sequence):
            if let peer = peer(of: link) {
                peer.reliable.peerAcknowledged(sequence)
                reliableRoomFreed(peer)
            }
        case .members(let members):
            if let peer = peer(of: link) { receivedMembers(members, from: peer) }
        default:
            guard let peer = peer(of: link), peer.active === link else { return }
            let sequence = peer.reliable.receive()
            switch message {
            case .streamChunk(let chunk): peer.unacknowledgedBytes += chunk.bytes.count
            case .data(let bytes): peer.unacknowledgedBytes += bytes.count
            default: break
            }
            if sequence % 64 == 0 || peer.unacknowledgedBytes >= Self.bulkLimit / 4 {
                peer.unacknowledgedBytes = 0
                write(.ack(sequence: peer.reliable.makeAck()), on: link)
            }
            handleApplication(message, from: peer, reliable: true)
        }
    }

    func peerSaidBye(_ reason: ByeReason, handshaken: Bool, on link: Link) {
        guard let peer = peer(of: link) else { return }
        logger.debug("\(peer.name) said bye: \(reason)", metadata: ["peer": "\(peer.id)"])
        if reason == .replaced { link.replacedByPeer = true }
        guard handshaken, reason != .replaced, reason != .protocolError else { return }
        // It leaves the session: every path goes.
        peer.left = true
        for dial in peer.dials.values { dial.scheduled?.cancel() }
        peer.dials = [:]
        peer.lastSucceeded = [:]  // it left: where it was proves nothing about where it comes back
        for other in Array(peer.links.values) where other !== link {
            perform(other.machine.drop("\(peer.name) left"), on: other)
        }
        peer.notConnectedReason = .left(reason)
        events.yield(.peerLeft(peer.id, reason: reason))
        streamsEnded(with: peer, reason: "\(peer.name) left")
    }

    // MARK: - Closing

    /// The channel of `link` closed: forget it, and settle its peer — another path takes over, or the peer is lost.
    func linkClosed(_ link: Link) {
        links[ObjectIdentifier(link)] = nil
        link.machine.channelClosed()
        if let token = link.machine.token, tokens[token] === link { tokens[token] = nil }
        guard runState == .running else { return }  // stopping: peers were told bye
        if let endpoint = link.endpoint {
            if let intended = link.intendedPeer, let peer = peers[intended] {
                dialEnded(endpoint, for: peer, failed: true)  // it never became the intended peer's link
            } else if link.peerID == nil {
                staticDialEnded(endpoint, failed: true)
            }
        }
        guard let peer = peer(of: link) else { return }
        // The peer replaced this link by another on its path, which may still be in its handshake here: that one
        // takes over as it would had this side replaced it, and the peer is not lost in between.
        let replacement =
            link.replacedByPeer
            ? peer.links.values.first { $0 !== link && $0.isOpen && $0.path == link.path } : nil
        detach(link, from: peer, replacedBy: replacement)
        forgetIfStranger(peer)
    }

    /// Forgets a peer that never completed a handshake and that nothing names: no link, no discovery record, no
    /// static endpoint, no proven endpoint. A flood of hellos leaves nothing behind.
    func forgetIfStranger(_ peer: PeerRecord) {
        guard !peer.everConnected, peer.links.isEmpty, peer.discovered.isEmpty, peer.lastSucceeded.isEmpty,
            !staticEndpoints.values.contains(where: { $0 == peer.id }),
            !discoveryRecords.values.contains(peer.id), peers[peer.id] === peer
        else { return }
        for dial in peer.dials.values { dial.scheduled?.cancel() }
        peers[peer.id] = nil
        memberRecords[peer.id] = nil
        membersSent[peer.id] = nil
        logger.trace("forgot \(peer.id): it never completed a handshake")
    }

    /// Takes `link` away from `peer` (closed or replaced): another path takes over, or the peer is lost. A link
    /// replaced by a duplicate on its path (`replacedBy`, in its handshake) does not lose a connected peer: the
    /// replacement becomes active when ready, and the peer is lost only if it closes first.
    func detach(_ link: Link, from peer: PeerRecord, replacedBy replacement: Link? = nil) {
        guard peer.links.removeValue(forKey: ObjectIdentifier(link)) != nil else { return }
        publishLink(link, of: peer, closed: true)
        for (id, pending) in pendingInvitations where pending.link === link {
            pending.timeout.cancel()
            pendingInvitations[id] = nil
        }
        if peer.active === link {
            peer.active = nil
            if isLeader(of: peer) { choosePath(for: peer) }
        }
        let replaced = replacement.map { $0.isOpen && peer.links[ObjectIdentifier($0)] === $0 } ?? false
        if let replacement, replaced, peer.handshakenLinks.isEmpty {
            // The replacement must be ready within the liveness timeout, or the peer is lost after all.
            let bound = NIOLoopBound((core: self, link: replacement), eventLoop: loop)
            loop.scheduleTask(in: configuration.livenessTimeout.timeAmount) {
                let (core, link) = bound.value
                guard link.isOpen, !link.machine.isHandshaken else { return }
                core.close(link, reason: "the replacing link did not complete its handshake in time")
            }
        }
        if !peer.handshakenLinks.isEmpty || replaced {
            reconcileDials(for: peer)  // the path that went is redialled; the peer stays connected meanwhile
            return
        }
        // The peer replaced this link by another on its path whose handshake has not reached this side yet (the two
        // dialled each other at once; its bye can even be lost to a reset), or such a link is in its handshake: the
        // peer is lost only if no link is handshaken within the liveness timeout.
        let handshakeUnderWay = links.values.contains {
            $0 !== link && $0.isOpen && $0.path == link.path && $0.peerID == nil
                && ($0.intendedPeer == nil || $0.intendedPeer == peer.id)
        }
        if (link.replacedByPeer || handshakeUnderWay) && peer.state == .connected {
            let bound = NIOLoopBound((core: self, peer: peer), eventLoop: loop)
            loop.scheduleTask(in: configuration.livenessTimeout.timeAmount) {
                let (core, peer) = bound.value
                guard core.peers[peer.id] === peer, peer.state == .connected, peer.handshakenLinks.isEmpty else {
                    return
                }
                core.lose(peer)
            }
            reconcileDials(for: peer)
            return
        }
        guard peer.links.isEmpty || peer.state == .connected else {
            reconcileDials(for: peer)
            return
        }
        lose(peer)
    }

    /// `peer` has no link left that carries its traffic: it is lost (and redialled) or, if it left, gone.
    func lose(_ peer: PeerRecord) {
        let wasConnected = peer.state == .connected
        if wasConnected && !peer.left {
            logger.debug("lost \(peer.name)", metadata: ["peer": "\(peer.id)"])
            events.yield(.peerLost(peer.id))
        }
        peer.active = nil
        peer.state = peer.left ? .lost : (canRedial(peer) ? .reconnecting : .lost)
        // Redial every endpoint after the first delay of a fresh backoff (the other side may be redialling
        // already), backing off up to the reconnect maximum.
        for endpoint in endpoints(of: peer) where peer.dials[endpoint]?.inFlight != true {
            peer.dials[endpoint]?.scheduled?.cancel()
            peer.dials[endpoint] = PeerRecord.DialState(backoff: makeBackoff(connected: false), failed: true)
        }
        publishState(of: peer)
        if wasConnected {
            membershipChanged()
            membersChanged()
        }
        reconcileDials(for: peer)
    }
}
