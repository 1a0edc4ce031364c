import NIOCore
import WireCodec

/// What the session keeps about one peer's links: its paths, the active one, the reliable channel across them, and
/// where it stands. What discovery, dials, datagrams and payloads keep about it lives with them, by peer id.
final class PeerRecord {
    let id: PeerID
    var name = ""
    /// What its hello said it supports.
    var capabilities: Capabilities = []
    var incarnation: UInt64?
    /// The static key its handshakes proved (nil on insecure links).
    var publicKey: [UInt8]?
    /// How it got in (nil on insecure links).
    var trust: DeviceTrust?
    var state = PeerState.discovered
    /// Its links that said hello and are open, one per path: the active one, standbys, and ones in their handshake.
    var links: [ObjectIdentifier: Link] = [:]
    /// The link that carries the peer's data. The pair's leader chooses it; see ``LinkStateMachine``.
    var active: Link?
    var reliable: ReliableChannel
    /// Payload bytes received since the last acknowledgement.
    var unacknowledgedBytes = 0
    var everConnected = false
    /// The peer said bye, or refused for good: do not redial until it shows up again.
    var left = false
    /// Why it is not connected, when that is more than its state says: a bye's reason, a refusal, a disconnect.
    var notConnectedReason: PeerConnectionState.Reason?
    /// The last connection state published for it.
    var publishedConnection: PeerConnectionState?
    /// Since when it has been away (a member with no link), as the tick saw it.
    var awaySince: NIODeadline?

    init(id: PeerID, replayBufferMessages: Int, replayBufferBytes: Int) {
        self.id = id
        self.reliable = ReliableChannel(maxMessages: replayBufferMessages, maxBytes: replayBufferBytes)
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

    /// The paths of its open links.
    var coveredPaths: Set<PathKey> { Set(links.values.filter(\.isOpen).map(\.path)) }

    /// Its open link on `path` other than `link`, if any.
    func otherLink(on path: PathKey, besides link: Link) -> Link? {
        links.values.first { $0 !== link && $0.path == path && $0.isOpen }
    }

    /// Round trips of the active link.
    var rtt: RoundTripEstimator { active?.rtt ?? RoundTripEstimator() }
}
