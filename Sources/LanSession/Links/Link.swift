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
    var intendedPeer: PeerID?
    /// Where the peer can be dialled, as this link proves once handshaken: the endpoint dialled, or for an accepted
    /// link the remote address with the port the peer's hello says it listens on.
    var provenEndpoint: Endpoint?
    let path: PathKey
    let openedAt: NIODeadline
    var machine: LinkStateMachine
    var liveness: Liveness
    /// Round trips of this link's heartbeats.
    var rtt = RoundTripEstimator()
    /// When the handshake completed.
    var readySince: NIODeadline?
    /// The peer said bye on it because another link on its path replaced it (a tie-break of simultaneous dials).
    var replacedByPeer = false
    /// Written to in the loop's current burst of work, the small frames waiting for its end, and the bytes of large
    /// ones written and not flushed yet (``LinkWriter``).
    var inBurst = false
    var pending: ByteBuffer?
    var unflushed = 0
    /// The secret handshake and sealing; nil without a secret.
    let security: LinkSecurity?
    /// The static key the handshake proved, and the signing key the peer's payload carried.
    var publicKey: [UInt8]?
    var signingKey: [UInt8]?
    /// How the device got in on this link (nil on insecure links).
    var trust: DeviceTrust?
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
    var hello: Hello?

    var role: LinkStateMachine.Role { machine.role }
    var peerID: PeerID? { hello?.peerID }
    var isOpen: Bool { !machine.isClosed }

    /// The remote address as "host:port".
    var remoteDescription: String {
        guard let address = channel.remoteAddress else { return endpoint?.description ?? path.address }
        let host = address.ipAddress ?? "?"
        return host.contains(":") ? "[\(host)]:\(address.port ?? 0)" : "\(host):\(address.port ?? 0)"
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
