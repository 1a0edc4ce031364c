import NIOCore
import WireCodec

/// One transport connection to a peer, from its first byte to its close.
final class Link {
    /// Which side opened it.
    enum Role: Hashable {
        case dialer
        case acceptor
    }

    /// Where the handshake stands.
    enum Phase: Hashable {
        /// Waiting for the other side's hello.
        case awaitingHello
        /// Acceptor: hello seen, waiting for the invitation.
        case awaitingInvitation
        /// Acceptor: the invitation waits for a decision.
        case deciding
        /// Dialer: invitation sent, waiting for accept or decline.
        case awaitingAnswer
        /// Accept exchanged, waiting for the other side's resume.
        case awaitingResume
        /// Handshake done both ways.
        case established
        /// Closed or being closed; anything more it delivers is ignored.
        case closed
    }

    let channel: any Channel
    let role: Role
    /// The endpoint dialled, for dialer links.
    let endpoint: Endpoint?
    /// The peer this link was dialled for, until it turns out to be that peer's link or not.
    var intendedPeer: PeerID?
    /// Where the peer can be dialled, as this link proves once it is established: the endpoint dialled, or for an
    /// accepted link the remote address with the port the peer's hello says it listens on.
    var provenEndpoint: Endpoint?
    let transport: String
    let openedAt: NIODeadline
    var phase = Phase.awaitingHello
    /// Whether the handshake completed, even if the link is closing now.
    var wasEstablished = false
    var hello: Hello?
    var liveness: Liveness

    init(
        channel: any Channel, role: Role, endpoint: Endpoint?, intendedPeer: PeerID?, transport: String,
        liveness: Liveness
    ) {
        self.channel = channel
        self.role = role
        self.endpoint = endpoint
        self.intendedPeer = intendedPeer
        self.transport = transport
        self.openedAt = liveness.lastReceived
        self.liveness = liveness
    }

    var peerID: PeerID? { hello?.peerID }
    var isOpen: Bool { phase != .closed }

    /// The remote address as "host:port".
    var remoteDescription: String {
        guard let address = channel.remoteAddress else { return endpoint?.description ?? "?" }
        let host = address.ipAddress ?? "?"
        return host.contains(":") ? "[\(host)]:\(address.port ?? 0)" : "\(host):\(address.port ?? 0)"
    }
}

/// Everything the session keeps about one peer, across its links.
final class PeerRecord {
    let id: PeerID
    var name = ""
    var incarnation: UInt64?
    var state = PeerState.discovered
    /// The link that carries (or is being set up to carry) this peer's traffic.
    var link: Link?
    var reliable: ReliableChannel
    /// Endpoints learnt from discovery, per DNS-SD record (instance name): a record that goes away takes only its own.
    var discovered: [String: [Endpoint]] = [:]
    /// When each endpoint last led to an established link; redials try the most recent first.
    var lastSucceeded: [Endpoint: NIODeadline] = [:]
    /// Endpoints still to try in the current round of dials.
    var round: [Endpoint] = []
    var backoff: Backoff
    /// The next round of dials, when one is scheduled.
    var redial: Scheduled<Void>?
    /// A dial of the current round is under way (connecting, or its link is in its handshake).
    var dialing = false
    var everConnected = false
    /// The peer said bye: do not redial until it shows up again.
    var left = false
    /// Round trips on the reliable link.
    var rtt = RoundTripEstimator()
    /// Round trips of datagram probes.
    var datagramRTT = RoundTripEstimator()
    var datagramAddress: SocketAddress?
    var linkToken: UInt64?
    var route = UnreliableRoute.probing
    var probeStarted: NIODeadline?
    var lastProbeSent: NIODeadline?
    var lastDatagramReceived: NIODeadline?
    var datagramSequence: UInt32 = 0

    init(id: PeerID, configuration: SessionConfiguration) {
        self.id = id
        self.reliable = ReliableChannel(
            maxMessages: configuration.replayBufferMessages, maxBytes: configuration.replayBufferBytes)
        self.backoff = Backoff(
            initial: .nanoseconds(configuration.reconnectInitialDelay.nanoseconds),
            maximum: .nanoseconds(configuration.reconnectMaximumDelay.nanoseconds))
    }

    var isConnected: Bool { state == .connected }

    /// Takes part in the session: connected now, or connected before and expected back.
    var isMember: Bool { everConnected && !left && state != .discovered }
}
