import NIOCore
import WireCodec

/// The path a link takes: its transport and the remote address, as seen from this side.
///
/// Both sides of a pair see the same path for a TCP connection whoever dialled it (each sees the other's address
/// on that network), so two links on one path are duplicates, and links on different paths (two networks, or LAN
/// and Bluetooth) are alternatives.
struct PathKey: Hashable, CustomStringConvertible {
    var transport: String
    var address: String

    var description: String { "\(transport) \(address)" }
}

/// One transport connection to a peer, from its first byte to its close: the channel, its handshake and activation
/// state machine, and its liveness and round-trip time.
final class Link {
    let channel: any Channel
    let transport: any Transport
    /// The endpoint dialled, for dialer links.
    let endpoint: Endpoint?
    /// The peer this link was dialled for, until it turns out to be that peer's link or not.
    private(set) var intendedPeer: PeerID?
    /// Where the peer can be dialled, as this link proves once handshaken: the endpoint dialled, or for an accepted
    /// link the remote address with the port the peer's hello says it listens on.
    private(set) var provenEndpoint: Endpoint?
    let path: PathKey
    let openedAt: NIODeadline
    // Read or stepped for every message on the loop, never across a call that could reach them again: not checked
    // for exclusive access at run time (a check costs about as much as the step).
    @exclusivity(unchecked) private(set) var machine: LinkStateMachine
    @exclusivity(unchecked) private(set) var liveness: Liveness
    /// Round trips of this link's heartbeats.
    private(set) var rtt = RoundTripEstimator()
    /// When the handshake completed.
    private(set) var readySince: NIODeadline?
    /// The peer said bye on it because another link on its path replaced it (a tie-break of simultaneous dials).
    private(set) var replacedByPeer = false
    /// What ``LinkWriter`` keeps of this link's writes.
    let outbox = LinkWriter.Outbox()
    /// The secret handshake and sealing; nil without a secret.
    let security: LinkSecurity?
    /// The static key the handshake proved, and the signing key the peer's payload carried.
    private(set) var publicKey: [UInt8]?
    private(set) var signingKey: [UInt8]?
    /// How the device got in on this link (nil on insecure links).
    private(set) var trust: DeviceTrust?
    /// The remote address when the link opened (nil on a transport without IP addresses).
    let remoteAddress: SocketAddress?

    init(
        channel: any Channel, role: LinkStateMachine.Role, transport: any Transport, endpoint: Endpoint?,
        intendedPeer: PeerID?, liveness: Liveness, security: LinkSecurity? = nil
    ) {
        self.security = security
        self.channel = channel
        self.transport = transport
        self.endpoint = endpoint
        self.intendedPeer = intendedPeer
        self.machine = LinkStateMachine(role: role)
        self.liveness = liveness
        self.openedAt = liveness.lastReceived
        self.remoteAddress = channel.remoteAddress
        self.path = PathKey(
            transport: transport.name,
            address: transport.pathAddress(of: channel) ?? endpoint?.host ?? "?")
    }

    /// The peer's hello, kept once it arrived (also after the link closed, to settle its peer).
    @exclusivity(unchecked) private(set) var hello: Hello?

    var role: LinkStateMachine.Role { machine.role }
    var peerID: PeerID? { hello?.peerID }
    var isOpen: Bool { !machine.isClosed }

    /// The remote address as "host:port".
    var remoteDescription: String {
        guard let address = channel.remoteAddress else { return endpoint?.description ?? path.address }
        let host = address.ipAddress ?? "?"
        return host.contains(":") ? "[\(host)]:\(address.port ?? 0)" : "\(host):\(address.port ?? 0)"
    }

    /// Steps its state machine (`input` calls one of its mutating methods): what the machine answers, the actions
    /// the core carries out.
    func step<Answer>(_ input: (inout LinkStateMachine) -> Answer) -> Answer {
        input(&machine)
    }

    // MARK: - Its traffic

    /// Something arrived on it (or by datagram, with its token) at `now`.
    func received(at now: NIODeadline) {
        liveness.didReceive(at: now)
    }

    /// Something was written on it at `now`.
    func sent(at now: NIODeadline) {
        liveness.didSend(at: now)
    }

    /// A heartbeat's round trip on it.
    func measured(roundTrip sample: TimeAmount) {
        rtt.add(sample)
    }

    // MARK: - What its handshake establishes

    /// The peer's hello arrived.
    func identified(by hello: Hello) {
        self.hello = hello
    }

    /// The link turned out not to be (or no longer needs to be) the dial of the peer it was dialled for.
    func forgetIntendedPeer() {
        intendedPeer = nil
    }

    /// The handshake proved the peer's static key.
    func proved(publicKey: [UInt8]) {
        self.publicKey = publicKey
    }

    /// How the device got in on this link.
    func trusted(as trust: DeviceTrust?) {
        self.trust = trust
    }

    /// An untrusted device: its signing key is kept for a pairing, and its machine lets nothing else through.
    func becomeStranger(signingKey: [UInt8]) {
        self.signingKey = signingKey
        machine.becomeStranger()
    }

    /// Its hello was admitted: where its peer can be dialled, as this link proves once handshaken (the endpoint
    /// dialled, or for an accepted link the remote address with the port the hello says the peer listens on).
    func admitted(_ hello: Hello) {
        if let endpoint {
            provenEndpoint = endpoint
        } else if let port = hello.listenPort, let address = channel.remoteAddress?.ipAddress {
            provenEndpoint = Endpoint(transport: transport.name, host: address, port: Int(port))
        }
    }

    /// The handshake completed both ways.
    func ready(at now: NIODeadline) {
        readySince = now
        intendedPeer = nil
    }

    /// The peer replaced it by another link on its path (a tie-break of simultaneous dials).
    func replacedOnPeersSide() {
        replacedByPeer = true
    }

    /// Where its peer's datagrams go while it is the active link; nil when its transport carries none or the peer
    /// takes none.
    var datagramRoute: DatagramRoute? {
        guard transport.carriesDatagrams, let hello, hello.datagramPort != 0, hello.capabilities.contains(.datagrams),
            let token = machine.token, let ip = channel.remoteAddress?.ipAddress,
            let address = try? SocketAddress(ipAddress: ip, port: Int(hello.datagramPort))
        else { return nil }
        return DatagramRoute(address: address, token: token, security: security)
    }

    /// What `peers` and `linkChanged` say of it.
    var info: LinkInfo {
        let state: LinkInfo.State =
            machine.isActive || machine.isActivating ? .active : machine.isHandshaken ? .standby : .connecting
        return LinkInfo(
            transport: transport.name, address: remoteDescription, state: state,
            rttMicros: rtt.smoothed.map { Int($0.nanoseconds / 1000) }, encrypted: security?.isEstablished ?? false,
            cipher: security?.cipher)
    }
}

extension SocketAddress {
    /// Whether `other` has the same IP address (ports aside), compared as bytes rather than formatted.
    func hasSameIP(as other: SocketAddress) -> Bool {
        switch (self, other) {
        case (.v4(let mine), .v4(let theirs)):
            return mine.address.sin_addr.s_addr == theirs.address.sin_addr.s_addr
        case (.v6(let mine), .v6(let theirs)):
            return withUnsafeBytes(of: mine.address.sin6_addr) { first in
                withUnsafeBytes(of: theirs.address.sin6_addr) { second in first.elementsEqual(second) }
            }
        default:
            return false
        }
    }
}
