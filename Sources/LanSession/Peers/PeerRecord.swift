import NIOCore
import WireCodec

/// Everything the session keeps about one peer, across its links.
final class PeerRecord {
    let id: PeerID
    var name = ""
    /// What its hello said it supports.
    var capabilities: Capabilities = []
    var incarnation: UInt64?
    var state = PeerState.discovered
    /// Its links that said hello and are open, one per path: the active one, standbys, and ones in their handshake.
    var links: [ObjectIdentifier: Link] = [:]
    /// The link that carries the peer's data. The pair's leader chooses it; see ``LinkStateMachine``.
    var active: Link?
    var reliable: ReliableChannel
    /// Endpoints learnt from discovery and from members, per record: a record that goes away takes only its own.
    var discovered: [String: [Endpoint]] = [:]
    /// Endpoints a handshake proved, with when; kept until the peer leaves.
    var lastSucceeded: [Endpoint: NIODeadline] = [:]
    /// Dials per endpoint: backoff, and whether one is under way or scheduled.
    var dials: [Endpoint: DialState] = [:]
    var everConnected = false
    /// The peer said bye: do not redial until it shows up again.
    var left = false
    /// Why it is not connected, when that is more than its state says: a bye's reason, a refusal, a disconnect.
    var notConnectedReason: PeerConnectionState.Reason?
    /// The last connection state published for it.
    var publishedConnection: PeerConnectionState?
    /// The application's invitation of it (``Session/invite(_:context:timeout:)``), while unanswered.
    var invite: PendingInvite?

    /// An invitation the application sent, and who waits for its answer.
    struct PendingInvite {
        var context: [UInt8]
        var timeout: Duration
        var waiting: [EventLoopPromise<Void>]
        var deadline: Scheduled<Void>
    }
    /// Round trips of datagram probes.
    var datagramRTT = RoundTripEstimator()
    var datagramAddress: SocketAddress?
    /// Whether its datagrams get through, and when to probe them.
    var prober: DatagramProber
    var route: UnreliableRoute { prober.route }
    var datagramSequence: UInt32 = 0
    /// Applications' data waiting for room on the reliable channel, in order.
    var outbox: [PendingData] = []
    /// Payload bytes received since the last acknowledgement.
    var unacknowledgedBytes = 0

    /// One endpoint's dials.
    struct DialState {
        var backoff: Backoff
        /// The last dial failed: the next one waits for the backoff.
        var failed = false
        var inFlight = false
        var scheduled: Scheduled<Void>?
    }

    init(id: PeerID, configuration: SessionConfiguration) {
        self.id = id
        self.reliable = ReliableChannel(
            maxMessages: configuration.replayBufferMessages, maxBytes: configuration.replayBufferBytes)
        self.prober = DatagramProber(configuration: configuration)
    }

    var isConnected: Bool { state == .connected }

    /// Its state for applications.
    var connectionState: PeerConnectionState {
        switch state {
        case .connected: .connected
        case .connecting: .connecting
        case .discovered: .notConnected(notConnectedReason ?? .notYetConnected)
        case .reconnecting, .lost: .notConnected(notConnectedReason ?? .lost)
        }
    }

    /// Takes part in the session: connected now, or connected before and expected back.
    var isMember: Bool { everConnected && !left && state != .discovered }

    /// Its handshaken links (the active one and the standbys).
    var handshakenLinks: [Link] { links.values.filter { $0.machine.isHandshaken } }

    /// The active link, when it carries data now (not while its activation waits for the answer).
    var dataLink: Link? {
        guard let active, active.machine.isActive else { return nil }
        return active
    }

    /// The datagram token of the active link.
    var linkToken: UInt64? { active?.machine.token }

    /// Round trips of the active link.
    var rtt: RoundTripEstimator { active?.rtt ?? RoundTripEstimator() }
}
