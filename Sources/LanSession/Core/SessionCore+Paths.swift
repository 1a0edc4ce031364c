import NIOCore
import WireCodec

/// What spans a peer's links: ready links stand by until ``PathKeeper`` activates one, the reliable channel resumes on
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
        reporter.publishLink(link, of: peer)
        logger.debug("link ready", metadata: ["peer": "\(peer.id)", "path": "\(link.path)"])
        keeper.choosePath(for: peer)
    }

    /// `link` carries the peer's data from now on (``PathKeeperDelegate``): resend what the peer missed; a first
    /// activation connects it.
    func resumed(on link: Link, of peer: PeerRecord, outcome: ReliableChannel.ResumeOutcome) {
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
        sender.roomFreed(for: peer)
        reporter.publishLink(link, of: peer)
        datagrams.follow(link.datagramRoute, of: peer.id, now: .now())
        guard peer.connected() else {
            logger.debug("\(peer.name): traffic on \(link.path)", metadata: ["peer": "\(peer.id)"])
            reporter.publishState(of: peer)
            return
        }
        endInvite(of: peer, nil)
        logger.debug(
            "connected to \(peer.name)", metadata: ["peer": "\(peer.id)", "link": "\(link.remoteDescription)"])
        events.yield(.peerConnected(peer.id, name: peer.name))
        reporter.publishState(of: peer)
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
        reporter.publishState(of: peer)
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
        keeper.detach(link, from: peer, replacedBy: replacement)
        members.forgetIfStranger(peer)
    }

}

extension SessionCore: PathKeeperDelegate {
    func canRedial(_ peer: PeerRecord) -> Bool { reporter.canRedial(peer) }

    func publishLink(_ link: Link, of peer: PeerRecord, closed: Bool) {
        reporter.publishLink(link, of: peer, closed: closed)
    }

    func publishState(of peer: PeerRecord) { reporter.publishState(of: peer) }

    func close(_ link: Link, reason: String) { gate.close(link, reason: reason) }

    func pathToActivate(for peer: PeerRecord, now: NIODeadline) -> Link? {
        peers.pathToActivate(for: peer, now: now)
    }

    func isCurrent(_ peer: PeerRecord) -> Bool { peers[peer.id] === peer }

    func hasHandshakeUnderWay(on path: PathKey, for id: PeerID, besides link: Link) -> Bool {
        links.hasHandshakeUnderWay(on: path, for: id, besides: link)
    }

    func activeLinkChanged(of id: PeerID, to link: Link?) {
        datagrams.activeLinkChanged(of: id, token: link?.machine.token, security: link?.security)
    }

    func detached(_ link: Link, from peer: PeerRecord) {
        invitations.drop(on: link)
    }

    func lost(_ peer: PeerRecord, wasConnected: Bool) {
        if wasConnected && !peer.left {
            logger.debug("lost \(peer.name)", metadata: ["peer": "\(peer.id)"])
            events.yield(.peerLost(peer.id))
        }
        dialler.peerLost(peer.id)
        reporter.publishState(of: peer)
        if wasConnected { membershipChanged() }
        dialler.reconcile(peer.id)
    }

    func reconcile(_ id: PeerID) {
        dialler.reconcile(id)
    }

    func restarted(_ peer: PeerRecord) {
        logger.debug("\(peer.name) restarted; its sequence numbers start over", metadata: ["peer": "\(peer.id)"])
        let (unsent, inDoubt) = peer.withReliable { $0.peerRestarted() }
        applications.forEach { $0.peerRestarted(peer.id) }
        streams.peerGone(peer.id, reason: "\(peer.name) restarted")
        // Data that never left this process, and durable messages not acknowledged, go to the new incarnation first,
        // in their order; other data its old one did not acknowledge may or may not have reached its application: the
        // application is told how much.
        sender.peerRestarted(peer, unsent: unsent)
        guard inDoubt > 0 else { return }
        logger.debug(
            "\(inDoubt) data messages to \(peer.name) were not acknowledged before it restarted",
            metadata: ["peer": "\(peer.id)", "resent": "\(unsent.count)"])
        events.yield(.unacknowledged(peer.id, messages: UInt64(inDoubt)))
    }
}
