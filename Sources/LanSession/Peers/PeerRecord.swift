import NIOCore
import WireCodec

/// What the session keeps about one peer's links: its paths, the active one, the reliable channel across them, and
/// where it stands. What discovery, dials, datagrams and payloads keep about it lives with them, by peer id.
final class PeerRecord {
    let id: PeerID
    private(set) var name = ""
    /// What its hello said it supports.
    private(set) var capabilities: Capabilities = []
    private(set) var incarnation: UInt64?
    /// The static key its handshakes proved (nil on insecure links).
    private(set) var publicKey: [UInt8]?
    /// How it got in (nil on insecure links).
    private(set) var trust: DeviceTrust?
    @exclusivity(unchecked) private(set) var state = PeerState.discovered
    /// Its links that said hello and are open, one per path: the active one, standbys, and ones in their handshake.
    @exclusivity(unchecked) private(set) var links: [ObjectIdentifier: Link] = [:]
    /// The link that carries the peer's data. The pair's leader chooses it; see ``LinkStateMachine``.
    @exclusivity(unchecked) private(set) var active: Link?
    /// Stepped for every sequenced message, only by the methods below, which call nothing that could reach it again:
    /// like the fields marked so above and below, not checked for exclusive access at run time, a check that costs
    /// about as much as the step.
    @exclusivity(unchecked) private(set) var reliable: ReliableChannel
    /// Payload bytes received since the last acknowledgement.
    @exclusivity(unchecked) private(set) var unacknowledgedBytes = 0
    private(set) var everConnected = false
    /// The peer said bye, or refused for good: do not redial until it shows up again.
    private(set) var left = false
    /// Why it is not connected, when that is more than its state says: a bye's reason, a refusal, a disconnect.
    private(set) var notConnectedReason: PeerConnectionState.Reason?
    /// The last connection state published for it.
    private(set) var publishedConnection: PeerConnectionState?
    /// Since when it has been away (a member with no link), as the tick saw it.
    private(set) var awaySince: NIODeadline?

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

    /// The link a ping goes on: its link of `transport` (any handshaken one, active or standby), or its active link
    /// (no array per ping on that path).
    func pingLink(on transport: String?) -> Link? {
        guard let transport else { return dataLink ?? handshakenLinks.first }
        return ([dataLink].compactMap { $0 } + handshakenLinks).first { $0.transport.name == transport }
    }

    /// Round trips of the active link.
    var rtt: RoundTripEstimator { active?.rtt ?? RoundTripEstimator() }

    /// Steps its reliable channel (`body` calls one of its mutating methods): what the channel answers.
    func withReliable<Answer, Failure: Error>(
        _ body: (inout ReliableChannel) throws(Failure) -> Answer
    ) throws(Failure) -> Answer {
        try body(&reliable)
    }

    // MARK: - What happens to it

    /// A name for it from a discovery record or a member list, unless it has one.
    func named(_ name: String) {
        if self.name.isEmpty { self.name = name }
    }

    /// A hello of its was admitted on a link that proved `publicKey` (nil on insecure links) and let it in as
    /// `trust`: true when it restarted since its last hello (another incarnation).
    func admitted(_ hello: Hello, publicKey: [UInt8]?, trust: DeviceTrust?) -> Bool {
        name = hello.displayName
        capabilities = hello.capabilities
        if let publicKey { self.publicKey = publicKey }
        self.trust = trust
        defer { incarnation = hello.incarnation }
        return incarnation.map { $0 != hello.incarnation } ?? false
    }

    /// `link` is one of its links from now on.
    func add(_ link: Link) {
        links[ObjectIdentifier(link)] = link
    }

    /// A link of its was admitted: it may be dialled again, and it is connecting unless it is connected already. True
    /// when its state changed.
    func connecting() -> Bool {
        left = false
        guard state != .connected && state != .connecting else { return false }
        state = .connecting
        return true
    }

    /// Takes `link` away from its links (and from being the active one); false when it was not one of them.
    func remove(_ link: Link) -> Bool {
        guard links.removeValue(forKey: ObjectIdentifier(link)) != nil else { return false }
        if active === link { active = nil }
        return true
    }

    /// `link` carries its data from now on.
    func activate(_ link: Link) {
        active = link
    }

    /// A link became active: it is connected (true when it was not before).
    func connected() -> Bool {
        guard state != .connected else { return false }
        state = .connected
        everConnected = true
        left = false
        return true
    }

    /// It was a member before this session started (``MembersStore``): a member from the start, away until it
    /// connects, so that what is sent to it waits for it.
    func remembered(name: String) {
        self.name = name
        everConnected = true
        state = .lost
    }

    /// No link carries its traffic: it is lost, and being reconnected when `redialling`.
    func lost(redialling: Bool) {
        active = nil
        state = left ? .lost : (redialling ? .reconnecting : .lost)
    }

    /// It left, was disconnected or removed, or refused for good (`reason`, when that is more than its state says):
    /// it is not redialled until it shows up again.
    func leave(_ reason: PeerConnectionState.Reason?) {
        left = true
        if let reason { notConnectedReason = reason }
    }

    /// It shows up again (a new record, an invitation, a trust): it may be dialled.
    func showsUpAgain() {
        left = false
    }

    /// Why it is not connected, when that is more than its state says.
    func notConnected(_ reason: PeerConnectionState.Reason?) {
        notConnectedReason = reason
    }

    /// Its connection state, when it changed since the last one published (which it is now).
    func connectionStateToPublish() -> PeerConnectionState? {
        if state == .connected || state == .connecting { notConnectedReason = nil }
        let connection = connectionState
        guard connection != publishedConnection else { return nil }
        publishedConnection = connection
        return connection
    }

    /// How long it has been away (a member with no link) at `now`, as the ticks saw it; nil when it is not away.
    func away(at now: NIODeadline) -> TimeAmount? {
        guard isMember, !isConnected else {
            awaySince = nil
            return nil
        }
        let since = awaySince ?? now
        awaySince = since
        return now - since
    }

    /// A sequenced message carrying `payloadBytes` of payload arrived.
    func receivedSequenced(payloadBytes: Int) {
        _ = reliable.receive()
        unacknowledgedBytes += payloadBytes
    }

    /// The acknowledgement of everything received.
    func makeAck() -> UInt64 {
        unacknowledgedBytes = 0
        return reliable.makeAck()
    }
}
