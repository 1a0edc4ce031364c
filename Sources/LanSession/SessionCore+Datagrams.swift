import NIOCore
import WireCodec

extension SessionCore {
    /// Starts probing the unreliable channel to a newly connected peer.
    func startDatagrams(for peer: PeerRecord, link: Link) {
        peer.lastDatagramReceived = nil
        peer.lastProbeSent = nil
        guard datagramChannel != nil, let hello = link.hello, hello.datagramPort != 0,
            hello.capabilities.contains(.datagrams), peer.linkToken != nil,
            let remote = link.channel.remoteAddress, let ip = remote.ipAddress,
            let address = try? SocketAddress(ipAddress: ip, port: Int(hello.datagramPort))
        else {
            peer.route = .fallback
            peer.datagramAddress = nil
            return
        }
        peer.datagramAddress = address
        peer.route = .probing
        peer.probeStarted = .now()
        sendDatagram(.ping(Ping(nonce: 0, timestamp: nowMicros())), to: peer)
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
        guard let channel = datagramChannel, let address = peer.datagramAddress, let token = peer.linkToken else {
            return
        }
        peer.datagramSequence &+= 1
        var buffer = channel.allocator.buffer(capacity: 32)
        buffer.writeInteger(token, endianness: .little)
        var sequence = UInt64(peer.datagramSequence)
        while sequence >= 0x80 {
            buffer.writeInteger(UInt8(truncatingIfNeeded: sequence) | 0x80)
            sequence >>= 7
        }
        buffer.writeInteger(UInt8(sequence))
        do {
            try buffer.writeFrame(message)
        } catch {
            logger.error("cannot encode \(message.kind): \(error)")
            return
        }
        if message.kind == .ping { peer.lastProbeSent = .now() }
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: buffer), promise: nil)
    }

    /// A datagram arrived: checked against the link token and the peer's address, then applied.
    func datagramReceived(_ data: ByteBuffer, from address: SocketAddress) {
        guard runState == .running else { return }
        data.withUnsafeReadableBytes { raw in
            do throws(WireError) {
                var reader = try DatagramReader(raw)
                guard let id = tokens[reader.header.linkToken], let peer = peers[id], peer.isConnected,
                    let expected = peer.datagramAddress, expected.ipAddress == address.ipAddress
                else {
                    logger.trace("dropping a datagram with an unknown token from \(address)")
                    return
                }
                peer.lastDatagramReceived = .now()
                peer.link?.liveness.didReceive(at: .now())
                while let message = try reader.next() {
                    switch message {
                    case .ping(let ping):
                        sendDatagramReply(.pong(ping), to: address, token: reader.header.linkToken)
                    case .pong(let pong):
                        if peer.route != .udp {
                            peer.route = .udp
                            logger.debug("datagrams get through to \(peer.name)")
                            publishState(of: peer)
                        }
                        receivedPong(pong, from: peer, unreliable: true)
                    case .move:
                        handleApplication(message, from: peer)
                    default:
                        logger.debug("ignoring \(message.kind) in a datagram from \(peer.name)")
                    }
                }
            } catch {
                logger.debug("dropping a malformed datagram from \(address): \(error)")
            }
        }
    }

    private func sendDatagramReply(_ message: Message, to address: SocketAddress, token: UInt64) {
        guard let channel = datagramChannel else { return }
        var buffer = channel.allocator.buffer(capacity: 32)
        buffer.writeInteger(token, endianness: .little)
        buffer.writeInteger(UInt8(0))
        guard (try? buffer.writeFrame(message)) != nil else { return }
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: buffer), promise: nil)
    }
}
