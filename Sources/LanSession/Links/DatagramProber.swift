import NIOCore

/// Whether a peer's datagrams get through, decided from datagram pings ("probes") and from the peer's reliable link. A
/// plain value driven with explicit times; ``SessionCore`` sends what its actions say.
///
/// Only answers to this side's own probes count: a pong proves the route both ways. Other datagrams from the peer prove
/// only that the peer's direction works, and a route whose other direction is lost would stay `udp` on them while
/// nothing this side sends arrives. Silence alone proves nothing: a peer whose event loop waits for a busy
/// CPU (32 daemons starting on two cores) answers late on every channel, and a route that fell back for that reason
/// would carry the peer's moves on its reliable link until the next probe. So the route falls back only on a witness:
/// the peer answered, on its reliable link, a ping sent after its probes had gone unanswered for ``probeTimeout``. Then
/// the peer is there and reads its link, and only its datagrams are missing.
///
/// - `probing`: a probe every ``probeInterval``; a pong makes the route `udp`; unanswered probes and a witness make it
///   `fallback`.
/// - `udp`: a probe every heartbeat interval; probes unanswered for ``udpTimeout`` (three heartbeat intervals, at most
///   the probe timeout), and a witness, make it `fallback`: within a second of datagrams going unanswered.
/// - `fallback`: a probe every liveness timeout; a pong makes the route `udp` again.
struct DatagramProber {
    /// What the session must do.
    enum Action: Equatable {
        /// Send a datagram ping to the peer.
        case sendProbe
        /// Send a heartbeat ping on the peer's reliable link: its answer tells whether the peer still reads.
        case sendWitness
        /// The route changed; tell the application.
        case routeChanged(UnreliableRoute)
    }

    /// While probing, a probe this often.
    static let probeInterval: TimeAmount = .milliseconds(200)
    /// How long after a witness's answer a pong to an earlier probe may still come: a peer that catches up reads its
    /// link and its datagram socket in no set order.
    static let witnessGrace: TimeAmount = .milliseconds(100)

    let probeTimeout: TimeAmount
    /// On `udp`, how long probes may go unanswered before a witness decides.
    var udpTimeout: TimeAmount { min(probeTimeout, heartbeatInterval * 3) }
    let heartbeatInterval: TimeAmount
    let livenessTimeout: TimeAmount
    private(set) var route: UnreliableRoute
    /// The first probe sent since the last datagram received: since when the peer owes an answer.
    private(set) var unansweredSince: NIODeadline?
    private(set) var lastProbeSent: NIODeadline?
    private(set) var lastDatagramReceived: NIODeadline?
    /// When the last witness was sent.
    private(set) var witnessSent: NIODeadline?
    /// When the newest ping the peer answered on its reliable link was sent, and when its answer came.
    private(set) var answeredPingSent: NIODeadline?
    private var answeredAt: NIODeadline?

    /// A prober that starts in `route`: `probing` for a new path, `fallback` where there are no datagrams (it then
    /// probes only if the session asks it to tick).
    init(
        route: UnreliableRoute = .probing, probeTimeout: TimeAmount, heartbeatInterval: TimeAmount,
        livenessTimeout: TimeAmount
    ) {
        self.route = route
        self.probeTimeout = probeTimeout
        self.heartbeatInterval = heartbeatInterval
        self.livenessTimeout = livenessTimeout
    }

    /// A prober with the session's timeouts.
    init(route: UnreliableRoute = .probing, configuration: SessionConfiguration) {
        self.init(
            route: route, probeTimeout: configuration.datagramProbeTimeout.timeAmount,
            heartbeatInterval: configuration.heartbeatInterval.timeAmount,
            livenessTimeout: configuration.livenessTimeout.timeAmount)
    }

    /// A datagram came from the peer: its direction works; says nothing of this side's.
    mutating func datagramReceived(at now: NIODeadline) {
        lastDatagramReceived = now
    }

    /// A pong to a datagram ping came back: the route works both ways, and the probes up to now need no answer.
    mutating func pongReceived(at now: NIODeadline) -> [Action] {
        datagramReceived(at: now)
        unansweredSince = nil
        guard route != .udp else { return [] }
        route = .udp
        return [.routeChanged(.udp)]
    }

    /// The peer answered, on a reliable link, a ping sent at `sentAt`.
    mutating func reliablePingAnswered(sentAt: NIODeadline, at now: NIODeadline) {
        guard answeredPingSent.map({ sentAt > $0 }) ?? true else { return }
        answeredPingSent = sentAt
        answeredAt = now
    }

    /// Decides on the route and the probes, as time passes (the session's tick).
    mutating func tick(at now: NIODeadline) -> [Action] {
        switch route {
        case .probing:
            if overdue(at: now), witnessed(at: now) {
                return fallBack()
            }
            return probe(every: Self.probeInterval, at: now) + witness(at: now)
        case .udp:
            if overdue(at: now), witnessed(at: now) {
                return fallBack()
            }
            return probe(every: heartbeatInterval, at: now) + witness(at: now)
        case .fallback:
            return probe(every: livenessTimeout, at: now)
        }
    }

    /// How long probes may go unanswered in the current route.
    private var timeout: TimeAmount { route == .udp ? udpTimeout : probeTimeout }

    /// The probes have gone unanswered for the route's timeout.
    private func overdue(at now: NIODeadline) -> Bool {
        guard let since = unansweredSince else { return false }
        return now - since >= timeout
    }

    /// The peer answered on its reliable link a ping sent once the probes had gone unanswered for the probe timeout,
    /// and the grace for pongs to the probes is over.
    private func witnessed(at now: NIODeadline) -> Bool {
        guard let since = unansweredSince, let sent = answeredPingSent, let answeredAt else { return false }
        return sent - since >= timeout && now - answeredAt >= Self.witnessGrace
    }

    private mutating func fallBack() -> [Action] {
        route = .fallback
        return [.routeChanged(.fallback)]
    }

    private mutating func probe(every interval: TimeAmount, at now: NIODeadline) -> [Action] {
        if let last = lastProbeSent, now - last < interval { return [] }
        lastProbeSent = now
        if unansweredSince == nil { unansweredSince = now }
        return [.sendProbe]
    }

    /// A witness once the probes are overdue, unless one was sent since.
    private mutating func witness(at now: NIODeadline) -> [Action] {
        guard overdue(at: now), let since = unansweredSince else { return [] }
        if let sent = witnessSent, sent - since >= timeout { return [] }
        witnessSent = now
        return [.sendWitness]
    }
}
