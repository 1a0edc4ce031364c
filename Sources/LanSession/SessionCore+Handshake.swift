import NIOCore
import WireCodec

extension SessionCore {
    /// Dispatches a message received on a stream link.
    func received(_ message: Message, on link: Link) {
        guard link.isOpen, runState == .running else { return }
        link.liveness.didReceive(at: .now())
        switch message {
        case .hello(let hello):
            receivedHello(hello, on: link)
        case .invitation(let invitation):
            receivedInvitation(invitation, on: link)
        case .accept(let accept):
            guard link.role == .dialer, link.phase == .awaitingAnswer, let peer = peer(of: link) else {
                return protocolViolation(link, "unexpected accept")
            }
            adoptToken(accept.linkToken, for: peer)
            link.phase = .awaitingResume
            write(.resume(peer.reliable.makeResume()), on: link)
        case .decline(let reason):
            receivedDecline(reason, on: link)
        case .resume(let resume):
            guard link.phase == .awaitingResume, let peer = peer(of: link) else {
                return protocolViolation(link, "unexpected resume")
            }
            establish(link, peer: peer, outcome: peer.reliable.peerResumed(resume))
        case .ping(let ping):
            write(.pong(ping), on: link)
        case .pong(let pong):
            if let peer = peer(of: link) { receivedPong(pong, from: peer) }
        case .ack(let sequence):
            guard link.phase == .established, let peer = peer(of: link) else { return }
            peer.reliable.peerAcknowledged(sequence)
        case .bye(let reason):
            guard let peer = peer(of: link) else { return close(link, reason: "bye before hello") }
            logger.info("\(peer.name) (\(peer.id)) left: \(reason)")
            if link.phase == .established && reason != .replaced {
                peer.left = true
                peer.redial?.cancel()
                peer.redial = nil
                peer.lastSucceeded = [:]  // it left: where it was proves nothing about where it comes back
                events.yield(.peerLeft(peer.id, reason: reason))
            }
            close(link, reason: "bye (\(reason))")
        default:
            guard link.phase == .established, let peer = peer(of: link) else {
                return protocolViolation(link, "\(message.kind) before the handshake completed")
            }
            if message.kind.isSequenced {
                let sequence = peer.reliable.receive()
                if sequence % 64 == 0 { write(.ack(sequence: peer.reliable.makeAck()), on: link) }
            }
            handleApplication(message, from: peer)
        }
    }

    /// The peer a link belongs to, once its hello arrived and the link is the peer's current one.
    func peer(of link: Link) -> PeerRecord? {
        guard let id = link.peerID, let peer = peers[id], peer.link === link else { return nil }
        return peer
    }

    func protocolViolation(_ link: Link, _ what: String) {
        logger.warning("closing link \(link.remoteDescription): \(what)")
        write(.bye(.protocolError), on: link)
        close(link, reason: what)
    }

    func refuse(_ link: Link, hello: Hello?, reason: DeclineReason, _ detail: String) {
        logger.notice("refusing \(hello?.displayName ?? "a peer") at \(link.remoteDescription): \(detail)")
        write(.decline(reason), on: link)
        events.yield(.declined(hello?.peerID, address: link.remoteDescription, reason: reason))
        close(link, reason: detail)
    }

    func receivedHello(_ hello: Hello, on link: Link) {
        guard link.phase == .awaitingHello else { return protocolViolation(link, "second hello") }
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
            close(link, reason: "this is ourselves")
            if let endpoint = link.endpoint { staticEndpoints[endpoint] = nil }
            return
        }
        link.hello = hello
        if let intended = link.intendedPeer, intended != hello.peerID {
            // The endpoint leads to another peer (a stale or forged record): the intended peer's round goes on.
            logger.debug(
                "dialled \(link.remoteDescription) for \(intended), found \(hello.peerID)",
                metadata: ["peer": "\(intended)"])
            if let endpoint = link.endpoint { peers[intended]?.lastSucceeded[endpoint] = nil }  // not its any more
            dialAttemptEnded(link)
        }
        let peer = record(for: hello.peerID)
        peer.name = hello.displayName
        if let endpoint = link.endpoint {
            link.provenEndpoint = endpoint
        } else if let port = hello.listenPort, let ip = link.channel.remoteAddress?.ipAddress {
            link.provenEndpoint = Endpoint(transport: link.transport, host: ip, port: Int(port))
        }
        if let endpoint = link.endpoint, staticEndpoints[endpoint] != nil {
            staticEndpoints[endpoint] = .some(peer.id)
        }
        if let known = peer.incarnation, known != hello.incarnation {
            logger.info("\(peer.name) (\(peer.id)) restarted; its sequence numbers start over")
            if let old = peer.link, old !== link {
                write(.bye(.replaced), on: old)
                close(old, reason: "peer restarted")
                detach(old, from: peer)
            }
            peer.reliable.peerRestarted()
            replica.forget(peer.id)  // what it held died with its process
        }
        peer.incarnation = hello.incarnation

        if let existing = peer.link, existing !== link, existing.isOpen {
            // Two links to one peer (both dialled at once, or a redial before the old link was seen to die): keep
            // the one dialled by the lower peer id; between two of the same dialer, the newer one.
            let oldDialer = existing.role == .dialer ? localPeer : peer.id
            let newDialer = link.role == .dialer ? localPeer : peer.id
            let keepNew = LinkArbiter.keepsNewLink(
                local: localPeer, peer: peer.id, newDialer: newDialer, oldDialer: oldDialer)
            if !keepNew {
                logger.debug("duplicate link to \(peer.name): keeping the one dialled by \(oldDialer)")
                write(.decline(.duplicateLink), on: link)
                close(link, reason: "duplicate link")
                return
            }
            logger.debug("duplicate link to \(peer.name): replacing the older one")
            write(existing.phase == .established ? .bye(.replaced) : .decline(.duplicateLink), on: existing)
            close(existing, reason: "replaced by a newer link")
            detach(existing, from: peer)
        }
        peer.link = link
        peer.left = false
        if peer.state != .connecting {
            peer.state = .connecting
            publishState(of: peer)
        }
        switch link.role {
        case .dialer:
            link.phase = .awaitingAnswer
            write(
                .invitation(
                    Invitation(
                        context: configuration.invitationContext,
                        timeoutMilliseconds: UInt32(clamping: configuration.invitationTimeout.nanoseconds / 1_000_000))),
                on: link)
        case .acceptor:
            link.phase = .awaitingInvitation
        }
    }

    /// Takes `link` away from `peer` after it was replaced, settling what `linkClosed` would have.
    func detach(_ link: Link, from peer: PeerRecord) {
        guard peer.link === link else { return }
        peer.link = nil
        if let token = peer.linkToken { tokens[token] = nil }
        peer.linkToken = nil
        if peer.state == .connected {
            peer.state = .reconnecting
            publishState(of: peer)
            membershipChanged()
        }
    }

    func receivedInvitation(_ invitation: Invitation, on link: Link) {
        guard link.role == .acceptor, link.phase == .awaitingInvitation, let peer = peer(of: link) else {
            return protocolViolation(link, "unexpected invitation")
        }
        let seats = members.filter { $0.id != peer.id }.count
        if !peer.everConnected && seats >= configuration.maxPeers {
            return refuse(
                link, hello: link.hello, reason: .full, "the session is full (\(configuration.maxPeers) peers)")
        }
        if peer.everConnected {
            return accept(link, peer: peer)  // a member coming back is not asked again
        }
        let request = InvitationRequest(
            id: nextInvitationID, peerID: peer.id, displayName: peer.name, context: invitation.context)
        nextInvitationID += 1
        switch configuration.invitationPolicy {
        case .acceptAll:
            accept(link, peer: peer)
        case .ask:
            link.phase = .deciding
            let bound = NIOLoopBound(self, eventLoop: loop)
            let timeout = loop.scheduleTask(in: configuration.invitationTimeout) {
                _ = bound.value.answer(request.id, decision: .decline(.timedOut))
            }
            pendingInvitations[request.id] = PendingInvitation(link: link, request: request, timeout: timeout)
            events.yield(.invitation(request))
        case .decide(let decide):
            link.phase = .deciding
            let bound = NIOLoopBound(self, eventLoop: loop)
            let timeout = loop.scheduleTask(in: configuration.invitationTimeout) {
                _ = bound.value.answer(request.id, decision: .decline(.timedOut))
            }
            pendingInvitations[request.id] = PendingInvitation(link: link, request: request, timeout: timeout)
            let loop = self.loop
            Task {
                let decision = await decide(request)
                loop.execute { _ = bound.value.answer(request.id, decision: decision) }
            }
        }
    }

    /// Answers a pending invitation; false when there is no such invitation (answered, timed out, or gone).
    @discardableResult
    func answer(_ id: UInt64, decision: InvitationDecision) -> Bool {
        guard let pending = pendingInvitations.removeValue(forKey: id) else { return false }
        pending.timeout.cancel()
        let link = pending.link
        guard link.isOpen, link.phase == .deciding, let peer = peer(of: link) else { return false }
        switch decision {
        case .accept:
            let seats = members.filter { $0.id != peer.id }.count
            guard seats < configuration.maxPeers else {
                refuse(link, hello: link.hello, reason: .full, "the session is full (\(configuration.maxPeers) peers)")
                return true
            }
            accept(link, peer: peer)
        case .decline(let reason):
            refuse(link, hello: link.hello, reason: reason, "invitation declined (\(reason))")
        }
        return true
    }

    func accept(_ link: Link, peer: PeerRecord) {
        var token: UInt64 = 0
        repeat { token = UInt64.random(in: 1...UInt64.max) } while tokens[token] != nil
        adoptToken(token, for: peer)
        write(.accept(Accept(linkToken: token)), on: link)
        link.phase = .awaitingResume
        write(.resume(peer.reliable.makeResume()), on: link)
    }

    func adoptToken(_ token: UInt64, for peer: PeerRecord) {
        if let old = peer.linkToken { tokens[old] = nil }
        peer.linkToken = token
        tokens[token] = peer.id
    }

    func receivedDecline(_ reason: DeclineReason, on link: Link) {
        let id = link.peerID
        if reason == .duplicateLink {
            close(link, reason: "the peer keeps another link")
            return
        }
        logger.notice("\(link.hello?.displayName ?? link.remoteDescription) declined: \(reason)")
        events.yield(.declined(id, address: link.remoteDescription, reason: reason))
        if let id, let peer = peers[id], peer.link === link {
            // A refusal that will not change by itself: stop redialling until the peer shows up anew.
            if reason == .versionMismatch || reason == .wrongSession || reason == .rejected {
                peer.left = true
            }
        }
        if let endpoint = link.endpoint, reason == .versionMismatch || reason == .wrongSession {
            staticEndpoints[endpoint] = nil
        }
        close(link, reason: "declined (\(reason))")
    }

    /// The handshake is complete both ways: the peer is connected.
    func establish(_ link: Link, peer: PeerRecord, outcome: ReliableChannel.ResumeOutcome) {
        link.phase = .established
        link.wasEstablished = true
        peer.state = .connected
        peer.everConnected = true
        peer.left = false
        peer.backoff.reset()
        peer.redial?.cancel()
        peer.redial = nil
        peer.dialing = false
        peer.round = []
        link.intendedPeer = nil
        if let endpoint = link.endpoint { endpointBackoff[endpoint] = nil }
        if let proven = link.provenEndpoint { peer.lastSucceeded[proven] = .now() }
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
            link.channel.writeAndFlush(resend, promise: nil)
        }
        write(.ping(Ping(nonce: 0, timestamp: nowMicros())), on: link)  // a first round-trip time at once
        startDatagrams(for: peer, link: link)
        logger.info("connected to \(peer.name) (\(peer.id)) at \(link.remoteDescription)")
        events.yield(.peerConnected(peer.id, name: peer.name))
        publishState(of: peer)
        // The original app's greeting, then the counts the peer may lack, for merging.
        sendSequenced(.handshake(peerName: configuration.displayName), to: peer)
        exchangeCounter(with: peer)
        if !membershipChanged() && layout.coordinator == localPeer {
            // A changed layout went to everyone with every bubble; otherwise this peer still needs them.
            sendSequenced(.layout(layout.entries), to: peer)
            for index in 0..<BubbleBoard.count { sendSequenced(.bubbleState(bubbles.state(UInt8(index))), to: peer) }
        }
    }
}
