import NIOCore
import WireCodec

/// Where peers can be reached, and the rounds of dials that reach them.
///
/// A peer is known by every endpoint static configuration and discovery give for it, each discovery record's kept
/// apart so that a record that goes away takes only what it gave, and by every endpoint where a handshake proved it
/// (kept until it leaves: a record that vanishes because a network flapped, or because mDNS stopped working, does not
/// cut a peer off that is still reachable). A peer without a link is dialled in rounds: every
/// known endpoint once, the one that most recently led to a link first, the next one as soon as a dial fails or its
/// link closes before its handshake completes; rounds are spaced by the peer's backoff.
extension SessionCore {
    /// Adds a static endpoint and dials it (now, or when the session starts).
    func addStaticEndpoint(_ endpoint: Endpoint) {
        if staticEndpoints[endpoint] == nil { staticEndpoints[endpoint] = .some(nil) }
        if runState == .running { dial(endpoint, for: nil) }
    }

    /// Sets what DNS-SD record `record` says of `id`: its endpoints. Dials the peer if it has no link: at once when
    /// the record gives an endpoint not known before, otherwise with the next round.
    func addDiscovered(_ endpoints: [Endpoint], peer id: PeerID, name: String, record: String) {
        guard id != localPeer else { return }
        if let previous = discoveryRecords[record], previous != id {
            peers[previous]?.discovered[record] = nil  // the record now names another peer
        }
        discoveryRecords[record] = id
        let peer = self.record(for: id)
        if peer.name.isEmpty { peer.name = name }
        let isNews = !Set(endpoints).isSubset(of: self.endpoints(of: peer))
        peer.discovered[record] = endpoints
        peer.left = false
        logger.debug(
            "discovered endpoints",
            metadata: ["peer": "\(id)", "record": "\(record)", "endpoints": "\(endpoints)"])
        guard peer.link == nil, runState == .running else { return }
        if peer.state == .discovered { publishState(of: peer) }
        if isNews, let scheduled = peer.redial {
            scheduled.cancel()
            peer.redial = nil
        }
        if !peer.dialing && peer.redial == nil { startRound(peer) }
    }

    /// Forgets the endpoints DNS-SD record `record` gave; the peer keeps those of its other records.
    func removeDiscovered(record: String) {
        guard let id = discoveryRecords.removeValue(forKey: record), let peer = peers[id] else { return }
        peer.discovered[record] = nil
        logger.debug("record withdrawn", metadata: ["peer": "\(id)", "record": "\(record)"])
    }

    func record(for id: PeerID) -> PeerRecord {
        if let peer = peers[id] { return peer }
        let peer = PeerRecord(id: id, configuration: configuration)
        peers[id] = peer
        return peer
    }

    /// Every endpoint `peer` is known by, in the order to try them: the proven ones, most recently successful
    /// first, then the static ones, then the discovered ones.
    func endpoints(of peer: PeerRecord) -> [Endpoint] {
        var seen = Set<Endpoint>()
        let succeeded = peer.lastSucceeded.sorted { $0.value > $1.value }.map(\.key)
        let fixed = staticEndpoints.filter { $0.value == peer.id }.keys.sorted { $0.description < $1.description }
        let found = peer.discovered.keys.sorted().flatMap { peer.discovered[$0]! }
        return (succeeded + fixed + found).filter { seen.insert($0).inserted }
    }

    func canRedial(_ peer: PeerRecord) -> Bool {
        !peer.lastSucceeded.isEmpty || staticEndpoints.values.contains(peer.id)
            || peer.discovered.values.contains { !$0.isEmpty }
    }

    /// Redials a peer that lost its link, after its backoff.
    func redialIfPossible(_ peer: PeerRecord) {
        guard runState == .running, !peer.left, peer.link == nil, !peer.dialing, peer.redial == nil else { return }
        scheduleRound(peer)
    }

    /// Starts a round of dials over every endpoint of `peer`.
    func startRound(_ peer: PeerRecord) {
        peer.round = endpoints(of: peer)
        attemptNext(peer)
    }

    /// Dials the next endpoint of the round; when none is left, schedules the next round.
    func attemptNext(_ peer: PeerRecord) {
        peer.dialing = false
        guard runState == .running, !peer.left, peer.link == nil else {
            peer.round = []
            return
        }
        let known = Set(endpoints(of: peer))
        while !peer.round.isEmpty {
            let endpoint = peer.round.removeFirst()
            if known.contains(endpoint) && !endpointsDialing.contains(endpoint) {
                dial(endpoint, for: peer)
                return
            }
        }
        scheduleRound(peer)
    }

    /// Schedules the next round of dials of `peer` after its backoff delay.
    func scheduleRound(_ peer: PeerRecord) {
        guard runState == .running, canRedial(peer), peer.redial == nil else { return }
        let delay = peer.backoff.nextDelay()
        let bound = NIOLoopBound(self, eventLoop: loop)
        let id = peer.id
        peer.redial = loop.scheduleTask(in: .nanoseconds(Int64(delay / .nanoseconds(1)))) {
            guard let peer = bound.value.peers[id] else { return }
            peer.redial = nil
            guard peer.link == nil, !peer.dialing else { return }
            bound.value.startRound(peer)
        }
    }

    /// Dials `endpoint`, for `peer` when the endpoint is known to be that peer's.
    func dial(_ endpoint: Endpoint, for peer: PeerRecord?) {
        guard runState == .running, !endpointsDialing.contains(endpoint) else { return }
        peer?.dialing = true
        endpointsDialing.insert(endpoint)
        let bound = NIOLoopBound(self, eventLoop: loop)
        let peerID = peer?.id
        logger.debug("dialling \(endpoint)", metadata: ["peer": "\(peerID.map { "\($0)" } ?? "?")"])
        transport.connect(to: endpoint, on: loop) { channel in
            bound.value.setUpStream(channel, role: .dialer, endpoint: endpoint, intendedPeer: peerID)
        }
        .whenComplete { result in
            let core = bound.value
            core.endpointsDialing.remove(endpoint)
            guard case .failure(let error) = result else { return }  // the link settles the rest
            core.logger.debug("dialling \(endpoint) failed: \(error)")
            if let peerID, let peer = core.peers[peerID] {
                core.attemptNext(peer)
            } else {
                core.scheduleStaticRedial(endpoint)
            }
        }
    }

    /// A dialled link ended without becoming its intended peer's: the round goes on with the next endpoint.
    func dialAttemptEnded(_ link: Link) {
        guard let id = link.intendedPeer else { return }
        link.intendedPeer = nil
        if let peer = peers[id], peer.dialing { attemptNext(peer) }
    }

    /// Schedules another dial of a static endpoint whose peer is not known yet.
    func scheduleStaticRedial(_ endpoint: Endpoint) {
        guard runState == .running, let owner = staticEndpoints[endpoint] else { return }
        if let id = owner, let peer = peers[id] {
            redialIfPossible(peer)
            return
        }
        let delay = endpointBackoff[
            endpoint,
            default: Backoff(
                initial: .nanoseconds(configuration.reconnectInitialDelay.nanoseconds),
                maximum: .nanoseconds(configuration.reconnectMaximumDelay.nanoseconds))
        ].nextDelay()
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(in: .nanoseconds(Int64(delay / .nanoseconds(1)))) {
            let core = bound.value
            guard case .some(let owner) = core.staticEndpoints[endpoint] else { return }
            if let id = owner, let peer = core.peers[id] {
                core.redialIfPossible(peer)
            } else {
                core.dial(endpoint, for: nil)
            }
        }
    }
}
