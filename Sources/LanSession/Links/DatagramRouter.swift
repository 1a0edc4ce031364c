import LinkCrypto
import Logging
import NIOCore
import WireCodec

/// What the datagram router needs from the session.
protocol DatagramRouterDelegate: AnyObject {
    /// Who sends datagrams with `token`: the handshaken link's peer, address and keys.
    func datagramSource(forToken token: UInt64) -> DatagramSource?
    /// A datagram with `token` was opened (or needed no opening): its link is alive.
    func datagramReceived(forToken token: UInt64, at now: NIODeadline)
    /// Carries out what `peer`'s prober asks: a witness on its link, a changed route to publish.
    func datagramRoute(of peer: PeerID, asks actions: [DatagramProber.Action])
    /// A pong by datagram: true when it answers a ping the application asked for.
    func datagramPingAnswered(_ pong: Ping, at now: NIODeadline) -> Bool
    /// A message for the peer's applications arrived by datagram (the peer is connected); throws when its
    /// application finds it malformed.
    func datagramDelivered(_ message: Message, from peer: PeerID) throws(WireError)
}

/// Where a peer's datagrams go, as the core hands it to the router from the peer's active link: the address (the
/// link's remote address at the datagram port its hello names), the link's token, and its keys (nil on an insecure
/// link).
struct DatagramRoute {
    var address: SocketAddress
    var token: UInt64
    var security: LinkSecurity?
}

/// Who sent a datagram, as the core tells the router from the token: the link's peer, its remote address (the
/// datagram's must have the same IP), its keys, and whether the peer is connected.
struct DatagramSource {
    var peer: PeerID
    var remoteAddress: SocketAddress?
    var security: LinkSecurity?
    var isConnected: Bool
}

/// The unreliable channel: the session's datagram socket, and per peer where its datagrams go and whether they get
/// through (its ``DatagramProber``).
///
/// Datagrams follow the peer's active path: its link's remote address, at the datagram port its hello names. A link
/// whose transport carries no datagrams, or a peer without a datagram port, has its unreliable messages on the link
/// itself (the route is `fallback` from the start). A datagram is checked against a handshaken link's token and its
/// peer's address, and opened with the link's keys when it is sealed; a probe (`ping`) is answered where it came from.
final class DatagramRouter {
    /// Where one peer's datagrams go.
    private struct Route {
        var address: SocketAddress?
        /// The token and keys of the peer's active link, what its datagrams are sent with.
        var token: UInt64?
        var security: LinkSecurity?
        var prober: DatagramProber
        var sequence: UInt32 = 0
    }

    /// The datagram socket, once open.
    private(set) var channel: (any Channel)?
    /// Sealed datagrams dropped: a bad tag, a replay, or not sealed on a sealed link.
    private(set) var dropped = 0
    /// Where a sealed datagram's header and opened frames are put together (one datagram at a time).
    private var opening = [UInt8](repeating: 0, count: Wire.maxDatagramLength)

    weak var delegate: (any DatagramRouterDelegate)?
    private let logger: Logger

    private let probeTimeout: TimeAmount
    private let heartbeatInterval: TimeAmount
    private let livenessTimeout: TimeAmount
    /// The clock of pings: microseconds since the session started.
    private let micros: (NIODeadline) -> UInt64
    private var routes: [PeerID: Route] = [:]

    /// The entries of its tables, by name (``Session/tableSizes()``).
    var tableSizes: [String: Int] { ["datagramRoutes": routes.count] }

    init(
        logger: Logger, probeTimeout: TimeAmount, heartbeatInterval: TimeAmount, livenessTimeout: TimeAmount,
        micros: @escaping (NIODeadline) -> UInt64
    ) {
        self.logger = logger
        self.probeTimeout = probeTimeout
        self.heartbeatInterval = heartbeatInterval
        self.livenessTimeout = livenessTimeout
        self.micros = micros
    }

    /// The datagram socket opened (`channel`) or closed (nil).
    func socket(_ channel: (any Channel)?) {
        self.channel = channel
    }

    private func prober(route: UnreliableRoute = .probing) -> DatagramProber {
        DatagramProber(
            route: route, probeTimeout: probeTimeout, heartbeatInterval: heartbeatInterval,
            livenessTimeout: livenessTimeout)
    }

    /// How unreliable messages reach `peer`.
    func route(of peer: PeerID) -> UnreliableRoute {
        routes[peer]?.prober.route ?? .probing
    }

    /// A link became `peer`'s active one: its datagrams follow `route`, probed anew, or go on the link when it has
    /// none (its transport carries no datagrams, or the peer takes none).
    func follow(_ route: DatagramRoute?, of peer: PeerID, now: NIODeadline) {
        guard channel != nil, let route else {
            routes[peer, default: Route(prober: prober())].prober = prober(route: .fallback)
            routes[peer]?.address = nil
            return
        }
        routes[peer] = Route(
            address: route.address, token: route.token, security: route.security, prober: prober(),
            sequence: routes[peer]?.sequence ?? 0)
        tick(peer, now: now)
    }

    /// `peer`'s active link changed (its activation is under way), or it has none (a nil token): datagrams are sent
    /// with its token and keys, to the address the route had, until the route follows it. A peer whose route never
    /// followed a link has no address to send to, and nothing to change.
    func activeLinkChanged(of peer: PeerID, token: UInt64?, security: LinkSecurity?) {
        guard routes[peer] != nil else { return }
        routes[peer]?.token = token
        routes[peer]?.security = security
    }

    /// Runs `peer`'s prober (from the session's tick, and when its datagrams start).
    func tick(_ peer: PeerID, now: NIODeadline) {
        guard routes[peer]?.address != nil, let actions = routes[peer]?.prober.tick(at: now), !actions.isEmpty
        else { return }
        carryOut(actions, for: peer)
    }

    /// `peer` answered, on a reliable link, a ping sent at `sentAt`: a witness that it reads its link.
    func reliablePingAnswered(by peer: PeerID, sentAt: NIODeadline, at now: NIODeadline) {
        routes[peer]?.prober.reliablePingAnswered(sentAt: sentAt, at: now)
    }

    /// Forgets `peer`'s route.
    func forget(_ peer: PeerID) {
        routes[peer] = nil
    }

    private func carryOut(_ actions: [DatagramProber.Action], for peer: PeerID) {
        var rest: [DatagramProber.Action] = []
        for action in actions {
            if action == .sendProbe {
                send(.ping(Ping(nonce: 0, timestamp: micros(.now()))), to: peer)
            } else {
                rest.append(action)
            }
        }
        if !rest.isEmpty { delegate?.datagramRoute(of: peer, asks: rest) }
    }

    // MARK: - Sending

    /// Sends `message` to `peer` in a datagram of its own, on its active link's route; nothing when it has none.
    /// False when the message does not fit a datagram (`Wire.maxDatagramLength` before sealing): nothing was sent.
    @discardableResult
    func send(_ message: Message, to peer: PeerID) -> Bool {
        guard let channel, let route = routes[peer], let address = route.address, let token = route.token else {
            return true
        }
        let header = DatagramHeader(linkToken: token, sequence: route.sequence &+ 1)
        guard send(message, header: header, to: address, on: channel, security: route.security) else { return false }
        routes[peer]!.sequence = header.sequence
        return true
    }

    /// Sends one message in one datagram, sealed with the link's keys when it has them; false when it is too large.
    @discardableResult
    private func send(
        _ message: Message, header: DatagramHeader, to address: SocketAddress, on channel: any Channel,
        security: LinkSecurity?
    ) -> Bool {
        var buffer = channel.allocator.buffer(capacity: 32)
        buffer.writeDatagramHeader(header)
        do {
            try buffer.writeFrame(message)
        } catch {
            logger.debug("cannot encode \(message.kind): \(error)")
            return true
        }
        guard buffer.readableBytes <= Wire.maxDatagramLength else { return false }  // sealing adds its 24 bytes

        if let security {
            guard var sealer = security.datagramSealer else { return true }
            let headerLength = header.size
            let size = DatagramSealer.sealedSize(of: buffer.readableBytes)
            var sealedBuffer = channel.allocator.buffer(capacity: size)
            var failure: LinkCryptoError?
            buffer.withUnsafeReadableBytes { raw in
                _ = sealedBuffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { output in
                    do throws(LinkCryptoError) {
                        try sealer.seal(
                            header: UnsafeRawBufferPointer(rebasing: raw[..<headerLength]),
                            plaintext: UnsafeRawBufferPointer(rebasing: raw[headerLength...]),
                            into: UnsafeMutableRawBufferPointer(rebasing: output[..<size]))
                        return size
                    } catch {
                        failure = error
                        return 0
                    }
                }
            }
            security.datagramSealer = sealer
            if let failure {
                logger.debug("cannot seal a datagram to \(address): \(failure)")
                return true
            }
            buffer = sealedBuffer
        }
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: buffer), promise: nil)
        return true
    }

    // MARK: - Receiving

    /// The datagram socket reported an error (an ICMP port unreachable from an earlier send, say); it stays open.
    func socketError(_ error: any Error) {
        logger.debug("datagram socket: \(error)")
    }

    /// A datagram arrived: checked against the link token and the peer's address, opened with the link's keys when
    /// it is sealed, then applied. Any ready link's token is taken, so that a probe is answered even before this side
    /// has finished the link's activation (a peer that probes on a link it activated would otherwise see its first
    /// probes go unanswered); what a datagram carries for the application waits for the peer to be connected.
    func received(_ data: ByteBuffer, from address: SocketAddress) {
        data.withUnsafeReadableBytes { raw in
            do throws(WireError) {
                let header = try DatagramHeader.read(from: raw)
                guard let source = delegate?.datagramSource(forToken: header.linkToken),
                    source.remoteAddress?.hasSameIP(as: address) == true
                else {
                    logger.trace("dropping a datagram with an unknown token from \(address)")
                    return
                }
                if let security = source.security {
                    guard var opener = security.datagramOpener else { return }
                    // The header, then the frames opened after it, in the router's own scratch buffer.
                    let opened = opening.withUnsafeMutableBytes { scratch in
                        scratch.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[..<header.size]))
                        return Result { () throws(LinkCryptoError) in
                            header.size
                                + (try opener.open(
                                    raw, headerLength: header.size,
                                    into: UnsafeMutableRawBufferPointer(rebasing: scratch[header.size...])))
                        }
                    }
                    security.datagramOpener = opener
                    switch opened {
                    case .success(let length):
                        let applied = opening.withUnsafeBytes { inner in
                            Result { () throws(WireError) in
                                var reader = try DatagramReader(UnsafeRawBufferPointer(rebasing: inner[..<length]))
                                try apply(&reader, from: address, source: source)
                            }
                        }
                        try applied.get()
                    case .failure(let error):
                        dropped += 1
                        logger.debug("dropping a datagram from \(address): \(error)")
                    }
                    return
                }
                var reader = try DatagramReader(raw)
                try apply(&reader, from: address, source: source)
            } catch {
                logger.debug("dropping a malformed datagram from \(address): \(error)")
            }
        }
    }

    private func apply(
        _ reader: inout DatagramReader, from address: SocketAddress, source: DatagramSource
    ) throws(WireError) {
        let now = NIODeadline.now()
        let peer = source.peer
        routes[peer]?.prober.datagramReceived(at: now)
        delegate?.datagramReceived(forToken: reader.header.linkToken, at: now)
        while let message = try reader.next() {
            switch message {
            case .ping(let ping):
                if let channel {
                    // Answered where it came from, so that a probe measures the path it took.
                    let header = DatagramHeader(linkToken: reader.header.linkToken, sequence: 0)
                    send(.pong(ping), header: header, to: address, on: channel, security: source.security)
                }
            case .pong(let pong) where source.isConnected:
                if let actions = routes[peer]?.prober.pongReceived(at: now), !actions.isEmpty {
                    delegate?.datagramRoute(of: peer, asks: actions)
                }
                _ = delegate?.datagramPingAnswered(pong, at: now)
            case .data, .appMessage, .application:
                // An application's kinds (0x20...0x29: `move`, and kinds of an application's own): the application
                // takes it or not.
                guard source.isConnected else { continue }
                try delegate?.datagramDelivered(message, from: peer)
            default:
                logger.debug("ignoring \(message.kind) in a datagram from \(peer)")
            }
        }
    }
}
