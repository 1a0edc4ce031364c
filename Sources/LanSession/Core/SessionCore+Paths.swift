import NIOCore
import WireCodec

/// What spans a peer's links: ready links stand by, the pair's leader activates one, the reliable channel resumes on
/// it, and a peer whose last link goes is lost (and redialled) or gone.
extension SessionCore {
    /// The handshake completed both ways: a path to the peer, standing by until its leader activates it.
    func linkReady(_ link: Link, token: UInt64) {
        guard let peer = peers.peer(of: link) else { return }
        links.register(token: token, for: link)
        if let proven = link.provenEndpoint { dialler.proved(proven, for: peer.id) }
        if let endpoint = link.endpoint { dialler.dialEnded(endpoint, for: peer.id, failed: false) }
        link.ready(at: .now())
        writer.write(.ping(Ping(nonce: 0, timestamp: pings.micros())), on: link)  // a first round-trip time at once
        sendTrust(on: link)  // what this device knows of the members, for the peer to catch up
        publishLink(link, of: peer)
        logger.debug("link ready", metadata: ["peer": "\(peer.id)", "path": "\(link.path)"])
        if isLeader(of: peer) { choosePath(for: peer) }
    }

    /// Whether this side chooses the active link of the pair: the lower peer id does.
    func isLeader(of peer: PeerRecord) -> Bool { localPeer < peer.id }

    /// Leader: keeps the best path active, switching when the active one died or went silent, or when a clearly
    /// better one has proved itself.
    func choosePath(for peer: PeerRecord, now: NIODeadline = .now()) {
        guard isLeader(of: peer), isRunningNow else { return }
        guard let chosen = peers.pathToActivate(for: peer, now: now) else { return }
        if let previous = peer.active, previous !== chosen {
            logger.debug(
                "\(peer.name): moving traffic from \(previous.path) to \(chosen.path)",
                metadata: ["peer": "\(peer.id)"])
            previous.step { $0.deactivate() }
            if previous.isOpen { publishLink(previous, of: peer) }
        }
        activate(chosen, of: peer)
        let resume = peer.withReliable { $0.makeResume() }
        perform(chosen.step { $0.activate(resume) }, on: chosen)
    }

    /// `link` carries `peer`'s data from now on; its datagrams go with its token and keys.
    private func activate(_ link: Link, of peer: PeerRecord) {
        peer.activate(link)
        datagrams.activeLinkChanged(of: peer.id, token: link.machine.token, security: link.security)
    }

    /// Follower: the leader made `link` the active one; answer, resend what it missed, and use it from now on.
    func activatedByPeer(_ link: Link, resume: Resume) {
        guard let peer = peers.peer(of: link) else { return }
        guard !isLeader(of: peer) else {
            // A late answer to an activation this side has moved on from; only its acknowledgement counts.
            peer.withReliable { $0.peerAcknowledged(resume.received) }
            return
        }
        if let previous = peer.active, previous !== link {
            previous.step { $0.deactivate() }
            if previous.isOpen { publishLink(previous, of: peer) }
        }
        activate(link, of: peer)
        let ours = peer.withReliable { $0.makeResume() }
        perform(link.step { $0.respond(ours) }, on: link)
        activated(link, of: peer, outcome: peer.withReliable { $0.peerResumed(resume) })
    }

    /// Leader: the follower answered the activation of `link`.
    func activationAnswered(_ link: Link, resume: Resume) {
        guard let peer = peers.peer(of: link), peer.active === link else { return }
        activated(link, of: peer, outcome: peer.withReliable { $0.peerResumed(resume) })
    }

    /// `link` carries the peer's data from now on: resend what the peer missed; a first activation connects it.
    private func activated(_ link: Link, of peer: PeerRecord, outcome: ReliableChannel.ResumeOutcome) {
        let resend: ByteBuffer
        switch outcome {
        case .resend(let frames):
            resend = frames
        case .gap(let lost, let frames):
            resend = frames
            logger.debug(
                "\(lost) messages from \(peer.name) (\(peer.id)) were lost (its replay buffer overflowed); re-synchronising"
            )
            events.yield(.resynchronised(peer.id, lost: lost))
        }
        if resend.readableBytes > 0 {
            link.sent(at: .now())
            writer.writeNow(resend, on: link)  // after the activation's resume
        }
        peer.withReliable { $0.wroteAll() }
        roomFreed(for: peer)
        publishLink(link, of: peer)
        datagrams.follow(link.datagramRoute, of: peer.id, now: .now())
        guard peer.connected() else {
            logger.debug("\(peer.name): traffic on \(link.path)", metadata: ["peer": "\(peer.id)"])
            publishState(of: peer)
            return
        }
        endInvite(of: peer, nil)
        logger.debug(
            "connected to \(peer.name)", metadata: ["peer": "\(peer.id)", "link": "\(link.remoteDescription)"])
        events.yield(.peerConnected(peer.id, name: peer.name))
        publishState(of: peer)
        applications.forEach { $0.peerConnected(peer.id) }
        membershipChanged()
    }

    /// A pong on a stream link: a measurement's answer, or a heartbeat's round trip on that path.
    func receivedPong(_ pong: Ping, on link: Link) {
        let now = NIODeadline.now()
        if pings.complete(pong.nonce, at: now) { return }
        let sample = Int64(pings.micros(now)) - Int64(pong.timestamp)
        guard sample >= 0 else { return }
        link.measured(roundTrip: .microseconds(sample))
        if let peer = peers.peer(of: link) {
            datagrams.reliablePingAnswered(by: peer.id, sentAt: now - .microseconds(sample), at: now)
        }
    }

    func peerSaidBye(_ reason: ByeReason, handshaken: Bool, on link: Link) {
        guard let peer = peers.peer(of: link) else { return }
        logger.debug("\(peer.name) said bye: \(reason)", metadata: ["peer": "\(peer.id)"])
        if reason == .replaced { link.replacedOnPeersSide() }
        guard handshaken, reason != .replaced, reason != .protocolError else { return }
        // It leaves the session: every path goes.
        peer.leave(nil)
        dialler.peerLeft(peer.id)
        for other in Array(peer.links.values) where other !== link {
            perform(other.step { $0.drop("\(peer.name) left") }, on: other)
        }
        peer.notConnected(.left(reason))
        events.yield(.peerLeft(peer.id, reason: reason))
        streams.peerGone(peer.id, reason: "\(peer.name) left")
        if reason == .removed { trust.removedBy(peer.id) }
    }

    /// Leaves `id`: says bye on each of its links, stops redialling it, ends the streams with it. It comes back when
    /// it shows up anew (a new discovery record) or is connected to again.
    func disconnect(_ id: PeerID) throws(SessionError) {
        guard let peer = peers[id] else { throw peers.noSuchMember(id) }
        peer.leave(.disconnected)
        dialler.stopDialling(id)
        for link in Array(peer.links.values) where link.isOpen {
            perform(link.step { $0.leave(.leaving) }, on: link)
        }
        streams.peerGone(id, reason: "disconnected")
        publishState(of: peer)
    }

    /// Fails what waits for members away longer than the delivery timeout (see
    /// ``SessionConfiguration/deliveryTimeout``); what the application hands them later fails by the next tick.
    func expireDeliveries(now: NIODeadline) {
        guard let timeout = configuration.deliveryTimeout?.timeAmount else { return }
        for peer in peers.all {
            guard let away = peer.away(at: now), away >= timeout else { continue }
            let seconds = Double(away.nanoseconds) / 1e9
            streams.peerAway(
                peer.id,
                reason: "\(peer.name.isEmpty ? "\(peer.id)" : peer.name) has been away for \(Int(seconds)) s "
                    + "(the delivery timeout is \(Int(Double(timeout.nanoseconds) / 1e9)) s)")
        }
    }

    // MARK: - Closing

    /// The channel of `link` closed: forget it, and settle its peer — another path takes over, or the peer is lost.
    func linkClosed(_ link: Link) {
        links.remove(link)
        link.step { $0.channelClosed() }
        guard isRunningNow else { return }  // stopping: peers were told bye
        trust.linkClosed(link)
        if let endpoint = link.endpoint {
            dialler.linkClosed(dialling: endpoint, intended: link.intendedPeer, helloReceived: link.peerID != nil)
        }
        guard let peer = peers.peer(of: link) else { return }
        // The peer replaced this link by another on its path, which may still be in its handshake here: that one
        // takes over as it would had this side replaced it, and the peer is not lost in between.
        let replacement = link.replacedByPeer ? peer.otherLink(on: link.path, besides: link) : nil
        detach(link, from: peer, replacedBy: replacement)
        forgetIfStranger(peer)
    }

    /// Takes `link` away from `peer` (closed or replaced): another path takes over, or the peer is lost. A link
    /// replaced by a duplicate on its path (`replacedBy`, in its handshake) does not lose a connected peer: the
    /// replacement becomes active when ready, and the peer is lost only if it closes first.
    func detach(_ link: Link, from peer: PeerRecord, replacedBy replacement: Link? = nil) {
        let wasActive = peer.active === link
        guard peer.remove(link) else { return }
        publishLink(link, of: peer, closed: true)
        invitations.drop(on: link)
        if wasActive {
            datagrams.activeLinkChanged(of: peer.id, token: nil, security: nil)
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
            dialler.reconcile(peer.id)  // the path that went is redialled; the peer stays connected meanwhile
            return
        }
        // The peer replaced this link by another on its path whose handshake has not reached this side yet (the two
        // dialled each other at once; its bye can even be lost to a reset), or such a link is in its handshake: the
        // peer is lost only if no link is handshaken within the liveness timeout.
        let handshakeUnderWay = links.hasHandshakeUnderWay(on: link.path, for: peer.id, besides: link)
        if (link.replacedByPeer || handshakeUnderWay) && peer.state == .connected {
            let bound = NIOLoopBound((core: self, peer: peer), eventLoop: loop)
            loop.scheduleTask(in: configuration.livenessTimeout.timeAmount) {
                let (core, peer) = bound.value
                guard core.peers[peer.id] === peer, peer.state == .connected, peer.handshakenLinks.isEmpty else {
                    return
                }
                core.lose(peer)
            }
            dialler.reconcile(peer.id)
            return
        }
        guard peer.links.isEmpty || peer.state == .connected else {
            dialler.reconcile(peer.id)
            return
        }
        lose(peer)
    }

    /// `peer` has no link left that carries its traffic: it is lost (and redialled) or, if it left, gone.
    private func lose(_ peer: PeerRecord) {
        let wasConnected = peer.state == .connected
        if wasConnected && !peer.left {
            logger.debug("lost \(peer.name)", metadata: ["peer": "\(peer.id)"])
            events.yield(.peerLost(peer.id))
        }
        peer.lost(redialling: canRedial(peer))
        datagrams.activeLinkChanged(of: peer.id, token: nil, security: nil)
        dialler.peerLost(peer.id)
        publishState(of: peer)
        if wasConnected { membershipChanged() }
        dialler.reconcile(peer.id)
    }

    func canRedial(_ peer: PeerRecord) -> Bool {
        !peer.left && dialler.hasEndpoints(peer.id)
    }
}
