import LinkCrypto
import NIOCore
import WireCodec

extension SessionCore {
    /// Starts probing the unreliable channel on a peer's newly active link: datagrams follow the active path, and
    /// go on its stream where its transport carries none.
    func startDatagrams(for peer: PeerRecord, link: Link) {
        guard datagramChannel != nil, link.transport.carriesDatagrams, let hello = link.hello, hello.datagramPort != 0,
            hello.capabilities.contains(.datagrams), peer.linkToken != nil,
            let remote = link.channel.remoteAddress, let ip = remote.ipAddress,
            let address = try? SocketAddress(ipAddress: ip, port: Int(hello.datagramPort))
        else {
            peer.prober = DatagramProber(route: .fallback, configuration: configuration)
            peer.datagramAddress = nil
            return
        }
        peer.datagramAddress = address
        peer.prober = DatagramProber(configuration: configuration)
        probeDatagrams(peer, now: .now())
    }

    /// Runs the peer's prober (from the tick, and when its datagrams start).
    func probeDatagrams(_ peer: PeerRecord, now: NIODeadline) {
        guard peer.datagramAddress != nil else { return }
        carryOut(peer.prober.tick(at: now), for: peer)
    }

    private func carryOut(_ actions: [DatagramProber.Action], for peer: PeerRecord) {
        for action in actions {
            switch action {
            case .sendProbe:
                sendDatagram(.ping(Ping(nonce: 0, timestamp: nowMicros())), to: peer)
            case .sendWitness:
                if let link = peer.active { write(.ping(Ping(nonce: 0, timestamp: nowMicros())), on: link) }
            case .routeChanged(.udp):
                logger.debug("datagrams get through to \(peer.name)")
                publishState(of: peer)
            case .routeChanged:
                logger.notice(
                    "datagrams do not get through to \(peer.name), though it answers on its link; using the link instead"
                )
                publishState(of: peer)
            }
        }
    }

    /// Sends `message` on the unreliable channel if it gets through, on the reliable link otherwise.
    func sendUnreliable(_ message: Message, to peer: PeerRecord) {
        if peer.route == .udp {
            sendDatagram(message, to: peer)
        } else {
            sendSequenced(message, to: peer)
        }
    }

    func sendDatagram(_ message: Message, to peer: PeerRecord) {
        guard let channel = datagramChannel, let address = peer.datagramAddress, let link = peer.active,
            let token = link.machine.token
        else {
            return
        }
        peer.datagramSequence &+= 1
        send(
            message, header: DatagramHeader(linkToken: token, sequence: peer.datagramSequence), to: address,
            on: channel, link: link)
    }

    /// Sends one message in one datagram, sealed with the link's keys when it has a secret.
    private func send(
        _ message: Message, header: DatagramHeader, to address: SocketAddress, on channel: any Channel, link: Link
    ) {
        var buffer = channel.allocator.buffer(capacity: 32)
        buffer.writeDatagramHeader(header)
        do {
            try buffer.writeFrame(message)
        } catch {
            logger.error("cannot encode \(message.kind): \(error)")
            return
        }
        if let security = link.security {
            guard var sealer = security.datagramSealer else { return }
            let headerLength = header.size
            let sealed = buffer.withUnsafeReadableBytes { raw in
                Result { () throws(LinkCryptoError) in
                    try sealer.seal(
                        header: UnsafeRawBufferPointer(rebasing: raw[..<headerLength]),
                        plaintext: UnsafeRawBufferPointer(rebasing: raw[headerLength...]))
                }
            }
            security.datagramSealer = sealer
            switch sealed {
            case .success(let bytes): buffer = channel.allocator.buffer(bytes: bytes)
            case .failure(let error):
                logger.warning("cannot seal a datagram to \(address): \(error)")
                return
            }
        }
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: buffer), promise: nil)
    }

    /// A datagram arrived: checked against the link token and the peer's address, opened with the link's keys when
    /// it has a secret, then applied. Any ready link's token is taken, so that a probe is answered even before this
    /// side has finished the link's activation (a peer that probes on a link it activated would otherwise see its
    /// first probes go unanswered); what a datagram carries for the application waits for the peer to be connected.
    func datagramReceived(_ data: ByteBuffer, from address: SocketAddress) {
        guard runState == .running else { return }
        data.withUnsafeReadableBytes { raw in
            do throws(WireError) {
                let header = try DatagramHeader.read(from: raw)
                guard let link = tokens[header.linkToken], let peer = peer(of: link),
                    link.remoteAddress?.hasSameIP(as: address) == true
                else {
                    logger.trace("dropping a datagram with an unknown token from \(address)")
                    return
                }
                if let security = link.security {
                    guard var opener = security.datagramOpener else { return }
                    let opened = Result { () throws(LinkCryptoError) in
                        try opener.open(raw, headerLength: header.size)
                    }
                    security.datagramOpener = opener
                    switch opened {
                    case .success(let plaintext):
                        let inner = [UInt8](UnsafeRawBufferPointer(rebasing: raw[..<header.size])) + plaintext
                        let applied = inner.withUnsafeBytes { inner in
                            Result { () throws(WireError) in
                                var reader = try DatagramReader(inner)
                                try apply(&reader, from: address, link: link, peer: peer)
                            }
                        }
                        try applied.get()
                    case .failure(let error):
                        droppedDatagrams += 1
                        logger.debug("dropping a datagram from \(address): \(error)")
                    }
                    return
                }
                var reader = try DatagramReader(raw)
                try apply(&reader, from: address, link: link, peer: peer)
            } catch {
                logger.debug("dropping a malformed datagram from \(address): \(error)")
            }
        }
    }

    private func apply(
        _ reader: inout DatagramReader, from address: SocketAddress, link: Link, peer: PeerRecord
    ) throws(WireError) {
        let now = NIODeadline.now()
        peer.prober.datagramReceived(at: now)
        link.liveness.didReceive(at: now)
        while let message = try reader.next() {
            switch message {
            case .ping(let ping):
                if let channel = datagramChannel {
                    // Answered where it came from, so a probe measures the path it took.
                    let header = DatagramHeader(linkToken: reader.header.linkToken, sequence: 0)
                    send(.pong(ping), header: header, to: address, on: channel, link: link)
                }
            case .pong(let pong) where peer.isConnected:
                carryOut(peer.prober.pongReceived(at: now), for: peer)
                receivedPong(pong, from: peer)
            case .move, .data:
                guard peer.isConnected else { continue }
                handleApplication(message, from: peer, reliable: false)
            default:
                logger.debug("ignoring \(message.kind) in a datagram from \(peer.name)")
            }
        }
    }
}
