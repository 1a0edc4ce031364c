import NIOCore
import WireCodec

/// Where peers can be reached, and the dials that reach them on every path.
///
/// A peer is known by every endpoint that static configuration, discovery and its members give for it — each record
/// kept apart, so that a record that goes away takes only what it gave — and by every endpoint where a handshake
/// proved it, kept until it leaves (a record that vanishes because a network flapped, or because mDNS stopped
/// working, does not cut off a peer that is still reachable).
///
/// Every endpoint whose path has no link is dialled, each with a backoff of its own: so a peer gets a link on every
/// path (a second network, another transport), a wrong endpoint only delays itself, and a lost path comes back as a
/// standby. While the peer is connected, its missing paths are retried less often.
extension SessionCore {
    /// Adds a static endpoint and dials it (now, or when the session starts).
    func addStaticEndpoint(_ endpoint: Endpoint) {
        if staticEndpoints[endpoint] == nil { staticEndpoints[endpoint] = .some(nil) }
        if runState == .running { dialStatic(endpoint) }
    }

    /// Sets what record `record` (a DNS-SD instance name, say) gives for `id`: its endpoints and name.
    func addDiscovered(_ endpoints: [Endpoint], peer id: PeerID, name: String, record: String) {
        guard id != localPeer else { return }
        if let previous = discoveryRecords[record], previous != id {
            peers[previous]?.discovered[record] = nil  // the record now names another peer
        }
        discoveryRecords[record] = id
        let peer = self.record(for: id)
        if peer.name.isEmpty { peer.name = name }
        // Each connected peer's `members` names every member again at each change: in a 32-host start this runs
        // thousands of times per daemon, nearly always with what the record said before, so it stays cheap then.
        let isNews = endpoints.contains { !knows($0, of: peer) }
        if peer.discovered.updateValue(endpoints, forKey: record) != endpoints {
            logger.debug(
                "endpoints of \(id) from \(record): \(endpoints)", metadata: ["peer": "\(id)", "record": "\(record)"])
        }
        guard isNews else { return }
        if peer.left && !record.hasPrefix(Self.memberRecordPrefix) { peer.left = false }  // it shows up anew
        if peer.state == .discovered { publishState(of: peer) }
        reconcileDials(for: peer)
    }

    /// Forgets the endpoints record `record` gave; the peer keeps those of its other records.
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

    /// Every endpoint `peer` is known by: the proven ones, most recently successful first, then the static ones,
    /// then those of records.
    func endpoints(of peer: PeerRecord) -> [Endpoint] {
        var seen = Set<Endpoint>()
        let succeeded = peer.lastSucceeded.sorted { $0.value > $1.value }.map(\.key)
        let fixed = staticEndpoints.filter { $0.value == peer.id }.keys.sorted { $0.description < $1.description }
        let found = peer.discovered.keys.sorted().flatMap { peer.discovered[$0]! }
        return (succeeded + fixed + found).filter { seen.insert($0).inserted }
    }

    /// Whether `endpoint` is one of those `peer` is known by (``endpoints(of:)``), without gathering and sorting them:
    /// `members` from every connected peer name every member, so this runs thousands of times in a large start.
    func knows(_ endpoint: Endpoint, of peer: PeerRecord) -> Bool {
        if peer.lastSucceeded[endpoint] != nil { return true }
        if case .some(.some(let id)) = staticEndpoints[endpoint], id == peer.id { return true }
        return peer.discovered.values.contains { $0.contains(endpoint) }
    }

    func canRedial(_ peer: PeerRecord) -> Bool {
        !peer.left && !endpoints(of: peer).isEmpty
    }

    /// The path dialling `endpoint` takes.
    func path(of endpoint: Endpoint) -> PathKey {
        PathKey(transport: endpoint.transport, address: endpoint.host)
    }

    /// Dials every endpoint of `peer` whose path has no link, now or after its backoff.
    func reconcileDials(for peer: PeerRecord) {
        guard runState == .running, !peer.left, mayDial(peer) else { return }
        let covered = Set(peer.links.values.filter(\.isOpen).map(\.path))
        for endpoint in endpoints(of: peer) where !covered.contains(path(of: endpoint)) {
            guard transport(named: endpoint.transport) != nil else { continue }
            var state = peer.dials[endpoint] ?? PeerRecord.DialState(backoff: makeBackoff(connected: peer.isConnected))
            guard !state.inFlight, state.scheduled == nil else { continue }
            if !state.failed {
                peer.dials[endpoint] = state
                dial(endpoint, for: peer)
            } else {
                let delay = state.backoff.nextDelay()
                let bound = NIOLoopBound(self, eventLoop: loop)
                let id = peer.id
                let path = path(of: endpoint)
                state.scheduled = loop.scheduleTask(in: .nanoseconds(Int64(delay / .nanoseconds(1)))) {
                    let core = bound.value
                    guard let peer = core.peers[id] else { return }
                    peer.dials[endpoint]?.scheduled = nil
                    guard !peer.left, !peer.links.values.contains(where: { $0.isOpen && $0.path == path }) else {
                        return
                    }
                    core.dial(endpoint, for: peer)
                }
                peer.dials[endpoint] = state
            }
        }
    }

    /// Whether this side dials `peer`: always with automatic invitations; otherwise a member, a peer the application
    /// invites, or one it gave an address of.
    func mayDial(_ peer: PeerRecord) -> Bool {
        configuration.invitesDiscoveredPeers || peer.everConnected || peer.invite != nil
            || staticEndpoints.values.contains(peer.id)
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
            let known = peers.values.map { "\($0.name.isEmpty ? "?" : $0.name) (\($0.id))" }.sorted()
            return loop.makeFailedFuture(
                SessionError(
                    .noSuchPeer,
                    "\(id) is not known (discover it, or connect to its address); known: "
                        + (known.isEmpty ? "none" : known.joined(separator: ", "))))
        }
        if peer.isConnected { return loop.makeSucceededVoidFuture() }
        let promise = loop.makePromise(of: Void.self)
        if var pending = peer.invite {
            pending.waiting.append(promise)
            peer.invite = pending
        } else {
            let bound = NIOLoopBound(self, eventLoop: loop)
            let name = peer.name.isEmpty ? "\(id)" : peer.name
            let deadline = loop.scheduleTask(in: timeout.timeAmount) {
                guard let peer = bound.value.peers[id] else { return }
                bound.value.endInvite(of: peer, SessionError(.timedOut, "\(name) did not accept within \(timeout)"))
            }
            peer.invite = PeerRecord.PendingInvite(
                context: context, timeout: timeout, waiting: [promise], deadline: deadline)
        }
        peer.left = false
        peer.notConnectedReason = nil
        reconcileDials(for: peer)
        return promise.futureResult
    }

    /// The application's invitation of `peer` is answered: accepted (`error` nil), declined, or timed out.
    func endInvite(of peer: PeerRecord, _ error: SessionError?) {
        guard let pending = peer.invite else { return }
        peer.invite = nil
        pending.deadline.cancel()
        for promise in pending.waiting {
            if let error { promise.fail(error) } else { promise.succeed() }
        }
        guard error != nil, !mayDial(peer) else { return }
        for dial in peer.dials.values { dial.scheduled?.cancel() }
        peer.dials = [:]
        for link in Array(peer.links.values) where link.isOpen && !link.machine.isHandshaken {
            perform(link.machine.drop("the invitation ended"), on: link)
        }
    }

    func makeBackoff(connected: Bool) -> Backoff {
        Backoff(
            initial: .nanoseconds(configuration.reconnectInitialDelay.timeAmount.nanoseconds),
            maximum: .nanoseconds(
                (connected
                    ? configuration.standbyRedialMaximumDelay.timeAmount
                    : configuration.reconnectMaximumDelay.timeAmount).nanoseconds)
        )
    }

    /// Dials `endpoint` for `peer`.
    func dial(_ endpoint: Endpoint, for peer: PeerRecord) {
        guard runState == .running, let transport = transport(named: endpoint.transport) else { return }
        peer.dials[endpoint, default: PeerRecord.DialState(backoff: makeBackoff(connected: peer.isConnected))]
            .inFlight = true
        let bound = NIOLoopBound(self, eventLoop: loop)
        let id = peer.id
        logger.debug("dialling \(endpoint)", metadata: ["peer": "\(id)"])
        transport.connect(to: endpoint, on: loop) { channel in
            bound.value.setUpStream(channel, role: .dialer, transport: transport, endpoint: endpoint, for: id)
        }
        .whenFailure { error in
            let core = bound.value
            core.logger.debug("dialling \(endpoint) failed: \(error)", metadata: ["peer": "\(id)"])
            if let peer = core.peers[id] { core.dialEnded(endpoint, for: peer, failed: true) }
        }
    }

    /// A dial of `endpoint` for `peer` ended: in a handshaken link, or not (the next one waits longer).
    func dialEnded(_ endpoint: Endpoint, for peer: PeerRecord, failed: Bool) {
        guard var dial = peer.dials[endpoint] else { return }
        dial.inFlight = false
        dial.failed = failed
        if !failed { dial.backoff = makeBackoff(connected: true) }
        peer.dials[endpoint] = dial
        if failed { reconcileDials(for: peer) }
    }

    // MARK: - Static endpoints of peers not known yet

    /// Dials a static endpoint (its peer is not known until its hello).
    func dialStatic(_ endpoint: Endpoint) {
        guard runState == .running, let owner = staticEndpoints[endpoint] else { return }
        if let id = owner, let peer = peers[id] { return reconcileDials(for: peer) }
        guard let transport = transport(named: endpoint.transport), staticDials[endpoint]?.inFlight != true else {
            return
        }
        staticDials[endpoint, default: PeerRecord.DialState(backoff: makeBackoff(connected: false))].inFlight = true
        let bound = NIOLoopBound(self, eventLoop: loop)
        transport.connect(to: endpoint, on: loop) { channel in
            bound.value.setUpStream(channel, role: .dialer, transport: transport, endpoint: endpoint, for: nil)
        }
        .whenComplete { result in
            guard case .failure(let error) = result else { return }
            bound.value.logger.debug("dialling \(endpoint) failed: \(error)")
            bound.value.events.yield(.connectFailed(endpoint, reason: "\(error)"))
            bound.value.staticDialEnded(endpoint, failed: true)
        }
    }

    /// A dial of a static endpoint whose peer was unknown ended; a failed one is retried after its backoff.
    func staticDialEnded(_ endpoint: Endpoint, failed: Bool) {
        guard var dial = staticDials[endpoint] else { return }
        dial.inFlight = false
        staticDials[endpoint] = dial
        guard failed, runState == .running, staticEndpoints[endpoint] != nil, dial.scheduled == nil else { return }
        let delay = dial.backoff.nextDelay()
        let bound = NIOLoopBound(self, eventLoop: loop)
        staticDials[endpoint]?.backoff = dial.backoff
        staticDials[endpoint]?.scheduled = loop.scheduleTask(in: .nanoseconds(Int64(delay / .nanoseconds(1)))) {
            bound.value.staticDials[endpoint]?.scheduled = nil
            bound.value.dialStatic(endpoint)
        }
    }
}
