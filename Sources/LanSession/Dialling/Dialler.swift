import Logging
import NIOCore
import WireCodec

/// What the dialler asks the session about a peer before it dials it.
struct DialFacts: Equatable {
    /// The session wants a link to it: every peer with automatic invitations, a member, a peer the application
    /// invites. (A peer a static endpoint turned out to be is wanted too; the dialler knows those itself.)
    var wanted: Bool
    /// It left, or refused for good: no dial until it shows up anew.
    var left: Bool
    /// Connected: its missing paths are redialled less often.
    var connected: Bool
    /// The paths its open links take: those are not dialled.
    var coveredPaths: Set<PathKey>
}

/// What the dialler needs from the session.
protocol DiallerDelegate: AnyObject {
    /// How `peer` stands; nil when the session does not know it.
    func dialFacts(for peer: PeerID) -> DialFacts?
    /// Opens a link to `endpoint`, dialled for `peer` (nil: a static endpoint whose peer is not known yet); the future
    /// fails when the connection does, and nil when no transport of the endpoint's name runs.
    func connect(to endpoint: Endpoint, for peer: PeerID?) -> EventLoopFuture<Void>?
    /// A connection to a static endpoint whose peer is not known yet failed.
    func staticDialFailed(_ endpoint: Endpoint, reason: String)
    /// Whether a transport of this name runs (endpoints of others are not dialled).
    func runsTransport(named name: String) -> Bool
}

/// Where peers can be reached, and the dials that reach them on every path.
///
/// A peer is known by every endpoint that static configuration, discovery records and its members give for it — each
/// record kept apart, so that a record that goes away takes only what it gave — and by every endpoint where a handshake
/// proved it, kept until it leaves (a record that vanishes because a network flapped, or because mDNS stopped
/// working, does not cut off a peer that is still reachable).
///
/// Every endpoint whose path has no link is dialled, each with a backoff of its own: so a peer gets a link on every
/// path (a second network, another transport), a wrong endpoint only delays itself, and a lost path comes back as a
/// standby. While the peer is connected, its missing paths are retried less often. Timers run on the session's loop
/// (an `EmbeddedEventLoop` in tests, whose clock the test moves).
final class Dialler {
    /// One endpoint's dials.
    struct DialState {
        var backoff: Backoff
        /// The last dial failed: the next one waits for the backoff.
        var failed = false
        var inFlight = false
        var scheduled: Scheduled<Void>?
    }

    /// What is known of where one peer is.
    private struct Whereabouts {
        /// Endpoints per discovery record (a DNS-SD instance name, or members heard from a peer).
        var discovered: [String: [Endpoint]] = [:]
        /// Endpoints a handshake proved, with when; kept until the peer leaves.
        var proven: [Endpoint: NIODeadline] = [:]
        var dials: [Endpoint: DialState] = [:]
    }

    weak var delegate: (any DiallerDelegate)?
    private let loop: any EventLoop
    private let logger: Logger
    private let localPeer: PeerID
    private let initialDelay: Duration
    private let maximumDelay: Duration
    private let standbyMaximumDelay: Duration
    private var running = false
    private var peers: [PeerID: Whereabouts] = [:]
    /// Static endpoints and the peer each one turned out to be.
    private var staticEndpoints: [Endpoint: PeerID?] = [:]
    private var staticDials: [Endpoint: DialState] = [:]
    /// The peer each discovery record names.
    private var records: [String: PeerID] = [:]

    /// The entries of its tables, by name (``Session/tableSizes()``): per peer what is known of where it is, and the
    /// endpoints and dials of all of them.
    var tableSizes: [String: Int] {
        var sizes = [
            "diallerPeers": peers.count, "diallerRecords": records.count, "diallerStatic": staticEndpoints.count,
            "diallerStaticDials": staticDials.count, "diallerDiscovered": 0, "diallerProven": 0, "diallerDials": 0,
        ]
        for whereabouts in peers.values {
            sizes["diallerDiscovered", default: 0] += whereabouts.discovered.count
            sizes["diallerProven", default: 0] += whereabouts.proven.count
            sizes["diallerDials", default: 0] += whereabouts.dials.count
        }
        return sizes
    }

    init(
        loop: any EventLoop, logger: Logger, localPeer: PeerID, initialDelay: Duration, maximumDelay: Duration,
        standbyMaximumDelay: Duration
    ) {
        self.loop = loop
        self.logger = logger
        self.localPeer = localPeer
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.standbyMaximumDelay = standbyMaximumDelay
    }

    // MARK: - Start and stop

    /// Dials from now on: every static endpoint at once.
    func start() {
        running = true
        for endpoint in staticEndpoints.keys { dialStatic(endpoint) }
    }

    /// Dials nothing more; every scheduled dial is cancelled.
    func stop() {
        running = false
        for whereabouts in peers.values {
            for dial in whereabouts.dials.values { dial.scheduled?.cancel() }
        }
        for dial in staticDials.values { dial.scheduled?.cancel() }
    }

    // MARK: - What is known

    /// Adds a static endpoint and dials it (now, or when the dialler starts).
    func addStatic(_ endpoint: Endpoint) {
        if staticEndpoints[endpoint] == nil { staticEndpoints[endpoint] = .some(nil) }
        if running { dialStatic(endpoint) }
    }

    /// A static endpoint leads to `peer`.
    func staticEndpoint(_ endpoint: Endpoint, isPeer peer: PeerID) {
        if staticEndpoints[endpoint] != nil { staticEndpoints[endpoint] = .some(peer) }
    }

    /// A static endpoint is no use: it leads to this very peer, or to one that refuses for good.
    func removeStatic(_ endpoint: Endpoint) {
        staticEndpoints[endpoint] = nil
    }

    /// Sets what discovery record `record` gives for `id`. Returns whether it tells something new of the peer (an
    /// endpoint it was not known by); the caller then dials it with ``reconcile(_:)``.
    func setRecord(_ record: String, endpoints: [Endpoint], for id: PeerID) -> Bool {
        if let previous = records[record], previous != id {
            peers[previous]?.discovered[record] = nil  // the record now names another peer
        }
        records[record] = id
        // Each connected peer's `members` names every member again at each change: in a 32-host start this runs
        // thousands of times per daemon, nearly always with what the record said before, so it stays cheap then.
        let isNews = endpoints.contains { !knows($0, of: id) }
        if peers[id, default: Whereabouts()].discovered.updateValue(endpoints, forKey: record) != endpoints {
            logger.debug(
                "endpoints of \(id) from \(record): \(endpoints)", metadata: ["peer": "\(id)", "record": "\(record)"])
        }
        return isNews
    }

    /// Forgets what `record` gave; the peer keeps the endpoints of its other records.
    func removeRecord(_ record: String) {
        guard let id = records.removeValue(forKey: record) else { return }
        peers[id]?.discovered[record] = nil
        logger.debug("record withdrawn", metadata: ["peer": "\(id)", "record": "\(record)"])
    }

    /// A handshake at `endpoint` proved `peer` there. An endpoint proven before on the same path (another port of the
    /// same address: where an earlier incarnation listened) is forgotten with its dials: a peer that restarts on a new
    /// port each time would otherwise leave one endpoint, and a redial of it after every loss, per incarnation.
    func proved(_ endpoint: Endpoint, for peer: PeerID) {
        var whereabouts = peers.removeValue(forKey: peer) ?? Whereabouts()
        let path = Self.path(of: endpoint)
        for earlier in whereabouts.proven.keys where earlier != endpoint && Self.path(of: earlier) == path {
            whereabouts.proven[earlier] = nil
            whereabouts.dials.removeValue(forKey: earlier)?.scheduled?.cancel()
        }
        whereabouts.proven[endpoint] = .now()
        peers[peer] = whereabouts
    }

    /// `endpoint` turned out not to lead to `peer`: it is no longer one where `peer` was proven.
    func disproved(_ endpoint: Endpoint, for peer: PeerID) {
        peers[peer]?.proven[endpoint] = nil
    }

    /// `endpoint` leads to this very peer: nobody is dialled there again.
    func forgetEndpoint(_ endpoint: Endpoint) {
        staticEndpoints[endpoint] = nil
        for id in Array(peers.keys) { peers[id]?.proven[endpoint] = nil }
    }

    /// Every endpoint `peer` is known by, in the order redials try them: the proven ones, most recently successful
    /// first, then the static ones, then those of records.
    func endpoints(of peer: PeerID) -> [Endpoint] {
        let whereabouts = peers[peer] ?? Whereabouts()
        var seen = Set<Endpoint>()
        let succeeded = whereabouts.proven.sorted { $0.value > $1.value }.map(\.key)
        let fixed = staticEndpoints.filter { $0.value == peer }.keys.sorted { $0.description < $1.description }
        let found = whereabouts.discovered.keys.sorted().flatMap { whereabouts.discovered[$0]! }
        return (succeeded + fixed + found).filter { seen.insert($0).inserted }
    }

    /// The endpoints where a handshake proved `peer`, most recent first.
    func provenEndpoints(of peer: PeerID) -> [Endpoint] {
        (peers[peer]?.proven ?? [:]).sorted { $0.value > $1.value }.map(\.key)
    }

    /// Whether `endpoint` is one of those `peer` is known by (``endpoints(of:)``), without gathering and sorting them:
    /// `members` from every connected peer name every member, so this runs thousands of times in a large start.
    func knows(_ endpoint: Endpoint, of peer: PeerID) -> Bool {
        if let whereabouts = peers[peer] {
            if whereabouts.proven[endpoint] != nil { return true }
            if whereabouts.discovered.values.contains(where: { $0.contains(endpoint) }) { return true }
        }
        if case .some(.some(let id)) = staticEndpoints[endpoint], id == peer { return true }
        return false
    }

    /// Whether `peer` has an endpoint to dial.
    func hasEndpoints(_ peer: PeerID) -> Bool {
        if let whereabouts = peers[peer],
            !whereabouts.proven.isEmpty
                || whereabouts.discovered.values.contains(
                    where: { !$0.isEmpty })
        {
            return true
        }
        return staticEndpoints.values.contains(peer)
    }

    /// Whether a static endpoint turned out to be `peer`'s: it is dialled whatever else the session wants.
    func isStatic(_ peer: PeerID) -> Bool {
        staticEndpoints.values.contains(peer)
    }

    /// Whether anything names `peer`: a record, a static endpoint, a proven endpoint. A peer nothing names and that
    /// never connected is forgotten.
    func names(_ peer: PeerID) -> Bool {
        if let whereabouts = peers[peer], !whereabouts.discovered.isEmpty || !whereabouts.proven.isEmpty {
            return true
        }
        return staticEndpoints.values.contains(peer) || records.values.contains(peer)
    }

    /// Forgets everything of `peer` and cancels its dials (it never completed a handshake and nothing names it).
    func forget(_ peer: PeerID) {
        guard let whereabouts = peers.removeValue(forKey: peer) else { return }
        for dial in whereabouts.dials.values { dial.scheduled?.cancel() }
    }

    // MARK: - Dials

    /// The path dialling `endpoint` takes.
    static func path(of endpoint: Endpoint) -> PathKey {
        PathKey(transport: endpoint.transport, address: endpoint.host)
    }

    /// Dials every endpoint of `peer` whose path has no link, now or after its backoff.
    func reconcile(_ peer: PeerID) {
        guard running, let delegate, let facts = delegate.dialFacts(for: peer), !facts.left,
            facts.wanted || isStatic(peer)
        else { return }
        for endpoint in endpoints(of: peer) where !facts.coveredPaths.contains(Self.path(of: endpoint)) {
            guard delegate.runsTransport(named: endpoint.transport) else { continue }
            var state = peers[peer]?.dials[endpoint] ?? DialState(backoff: makeBackoff(connected: facts.connected))
            guard !state.inFlight, state.scheduled == nil else { continue }
            if !state.failed {
                peers[peer, default: Whereabouts()].dials[endpoint] = state
                dial(endpoint, for: peer)
            } else {
                let delay = state.backoff.nextDelay()
                let bound = NIOLoopBound(self, eventLoop: loop)
                state.scheduled = loop.scheduleTask(in: .nanoseconds(Int64(delay / .nanoseconds(1)))) {
                    bound.value.retry(endpoint, for: peer)
                }
                peers[peer, default: Whereabouts()].dials[endpoint] = state
            }
        }
    }

    /// A dial's backoff is over: dial again, unless the peer left or its path got a link meanwhile (then the dial is
    /// forgotten: the next loss starts a fresh one).
    private func retry(_ endpoint: Endpoint, for peer: PeerID) {
        guard peers[peer]?.dials[endpoint] != nil else { return }
        peers[peer]?.dials[endpoint]?.scheduled = nil
        guard let facts = delegate?.dialFacts(for: peer), !facts.left,
            !facts.coveredPaths.contains(Self.path(of: endpoint))
        else {
            peers[peer]?.dials[endpoint] = nil
            return
        }
        dial(endpoint, for: peer)
    }

    /// Dials `endpoint` for `peer`.
    private func dial(_ endpoint: Endpoint, for peer: PeerID) {
        guard running, let delegate else { return }
        let connected = delegate.dialFacts(for: peer)?.connected ?? false
        peers[peer, default: Whereabouts()].dials[
            endpoint, default: DialState(backoff: makeBackoff(connected: connected))
        ]
        .inFlight = true
        logger.debug("dialling \(endpoint)", metadata: ["peer": "\(peer)"])
        guard let connecting = delegate.connect(to: endpoint, for: peer) else {
            peers[peer]?.dials[endpoint]?.inFlight = false
            return
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        connecting.whenFailure { error in
            let dialler = bound.value
            dialler.logger.debug("dialling \(endpoint) failed: \(error)", metadata: ["peer": "\(peer)"])
            dialler.dialEnded(endpoint, for: peer, failed: true)
        }
    }

    /// A dial of `endpoint` for `peer` ended: in a handshaken link (nothing of it is kept: the next dial starts with
    /// a fresh backoff), or not (the next one waits longer).
    func dialEnded(_ endpoint: Endpoint, for peer: PeerID, failed: Bool) {
        guard var dial = peers[peer]?.dials[endpoint] else { return }
        guard failed else {
            dial.scheduled?.cancel()
            peers[peer]?.dials[endpoint] = nil
            return
        }
        dial.inFlight = false
        dial.failed = true
        peers[peer]?.dials[endpoint] = dial
        reconcile(peer)
    }

    /// `peer` lost its last link: every endpoint is to be redialled after the first delay of a fresh backoff (the
    /// other side may be redialling already), backing off up to the reconnect maximum; ``reconcile(_:)`` dials.
    func peerLost(_ peer: PeerID) {
        for endpoint in endpoints(of: peer) where peers[peer]?.dials[endpoint]?.inFlight != true {
            peers[peer]?.dials[endpoint]?.scheduled?.cancel()
            peers[peer, default: Whereabouts()].dials[endpoint] = DialState(
                backoff: makeBackoff(connected: false), failed: true)
        }
    }

    /// `peer` left the session: no more dials, and where it was proves nothing about where it comes back.
    func peerLeft(_ peer: PeerID) {
        stopDialling(peer)
        peers[peer]?.proven = [:]
    }

    /// Cancels `peer`'s dials (it left, was disconnected, or is no longer wanted).
    func stopDialling(_ peer: PeerID) {
        guard let dials = peers[peer]?.dials else { return }
        for dial in dials.values { dial.scheduled?.cancel() }
        peers[peer]?.dials = [:]
    }

    private func makeBackoff(connected: Bool) -> Backoff {
        Backoff(initial: initialDelay, maximum: connected ? standbyMaximumDelay : maximumDelay)
    }

    // MARK: - Static endpoints of peers not known yet

    /// Dials a static endpoint (its peer is not known until its hello).
    private func dialStatic(_ endpoint: Endpoint) {
        guard running, let delegate, let owner = staticEndpoints[endpoint] else { return }
        if let id = owner, delegate.dialFacts(for: id) != nil { return reconcile(id) }
        guard delegate.runsTransport(named: endpoint.transport), staticDials[endpoint]?.inFlight != true else {
            return
        }
        staticDials[endpoint, default: DialState(backoff: makeBackoff(connected: false))].inFlight = true
        guard let connecting = delegate.connect(to: endpoint, for: nil) else {
            staticDials[endpoint]?.inFlight = false
            return
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        connecting.whenFailure { error in
            let dialler = bound.value
            dialler.logger.debug("dialling \(endpoint) failed: \(error)")
            dialler.delegate?.staticDialFailed(endpoint, reason: "\(error)")
            dialler.staticDialEnded(endpoint, failed: true)
        }
    }

    /// A dial of a static endpoint whose peer was unknown ended; a failed one is retried after its backoff.
    func staticDialEnded(_ endpoint: Endpoint, failed: Bool) {
        guard var dial = staticDials[endpoint] else { return }
        dial.inFlight = false
        staticDials[endpoint] = dial
        guard failed, running, staticEndpoints[endpoint] != nil, dial.scheduled == nil else { return }
        let delay = dial.backoff.nextDelay()
        let bound = NIOLoopBound(self, eventLoop: loop)
        staticDials[endpoint]?.backoff = dial.backoff
        staticDials[endpoint]?.scheduled = loop.scheduleTask(in: .nanoseconds(Int64(delay / .nanoseconds(1)))) {
            bound.value.staticDials[endpoint]?.scheduled = nil
            bound.value.dialStatic(endpoint)
        }
    }

    /// A link dialled to `endpoint` closed: a failed dial of `intended` (it never became that peer's link), or of
    /// the static endpoint: the link closed before any hello, or it led to no member (a device that admission `paired`
    /// does not trust, which comes back as a stranger to pair with at the next dial; docs/wire-format.md, section 9.5).
    func linkClosed(dialling endpoint: Endpoint, intended: PeerID?, helloReceived: Bool) {
        if let intended, delegate?.dialFacts(for: intended) != nil {
            dialEnded(endpoint, for: intended, failed: true)
        } else if !helloReceived || staticEndpoints[endpoint] == .some(nil) {
            staticDialEnded(endpoint, failed: true)
        }
    }
}
