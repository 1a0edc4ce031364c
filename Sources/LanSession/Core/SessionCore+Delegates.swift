import NIOCore
import WireCodec

/// What the components ask the core: facts about peers, and effects across components.
extension SessionCore: DiallerDelegate {
    func dialFacts(for id: PeerID) -> DialFacts? {
        guard let peer = peers[id] else { return nil }
        return DialFacts(
            wanted: wantsLink(to: peer), left: peer.left, connected: peer.isConnected,
            coveredPaths: peer.coveredPaths)
    }

    func connect(to endpoint: Endpoint, for peer: PeerID?) -> EventLoopFuture<Void>? {
        guard isRunningNow, let transport = transport(named: endpoint.transport) else { return nil }
        let bound = NIOLoopBound(self, eventLoop: loop)
        return transport.connect(to: endpoint, on: loop) { channel in
            bound.value.setUpStream(channel, role: .dialer, transport: transport, endpoint: endpoint, for: peer)
        }
        .map { _ in }
    }

    func staticDialFailed(_ endpoint: Endpoint, reason: String) {
        events.yield(.connectFailed(endpoint, reason: reason))
    }

    func runsTransport(named name: String) -> Bool {
        transport(named: name) != nil
    }
}

extension SessionCore: SessionSocketsDelegate {
    func accepted(_ channel: any Channel, on transport: any Transport) -> EventLoopFuture<Void> {
        setUpStream(channel, role: .acceptor, transport: transport, endpoint: nil, for: nil)
    }

    var socketsWanted: Bool { isRunningNow }

    func descriptorsExhausted() { gate.descriptorsExhausted() }

    func datagramsUnavailable(_ notice: SessionNotice) {
        events.yield(.notice(notice))
    }
}

extension SessionCore: DatagramRouterDelegate {
    func datagramSource(forToken token: UInt64) -> DatagramSource? {
        guard isRunningNow, let link = links.link(forToken: token), let peer = peers.peer(of: link) else {
            return nil
        }
        return DatagramSource(
            peer: peer.id, remoteAddress: link.remoteAddress, security: link.security, isConnected: peer.isConnected)
    }

    func datagramReceived(forToken token: UInt64, at now: NIODeadline) {
        links.link(forToken: token)?.received(at: now)
    }

    func datagramRoute(of id: PeerID, asks actions: [DatagramProber.Action]) {
        guard let peer = peers[id] else { return }
        for action in actions {
            switch action {
            case .sendProbe:
                break  // the router sends its own probes
            case .sendWitness:
                if let link = peer.active { writer.write(.ping(Ping(nonce: 0, timestamp: pings.micros())), on: link) }
            case .routeChanged(.udp):
                logger.debug("datagrams get through to \(peer.name)")
                reporter.publishState(of: peer)
                applications.forEach { $0.unreliableRouteChanged(peer.id, to: .udp) }
            case .routeChanged(let route):
                let notice = SessionNotice.datagramsFallBack(peer.id, name: peer.name)
                logger.debug("\(notice)")
                events.yield(.notice(notice))
                reporter.publishState(of: peer)
                applications.forEach { $0.unreliableRouteChanged(peer.id, to: route) }
            }
        }
    }

    func datagramPingAnswered(_ pong: Ping, at now: NIODeadline) -> Bool {
        pings.complete(pong.nonce, at: now)
    }

    func datagramDelivered(_ message: Message, from id: PeerID) throws(WireError) {
        guard let peer = peers[id] else { return }
        try handleCommand(message, from: peer, reliably: false)
    }
}

/// The applications told that their state messages were refused; byte streams opened with a handle of this session.
extension SessionCore: PeerSenderDelegate {
    func peerMissedMessages(_ peer: PeerID) {
        applications.forEach { $0.peerMissedMessages(peer) }
    }

    /// Hands `event` to the session's subscribers (for ``Invitations`` and ``TrustKeeper``).
    func emit(_ event: SessionEvent) {
        events.yield(event)
    }
}

/// The gate asks whether the session runs, and has the core carry out a link's actions.
extension SessionCore: LinkGateDelegate {}
