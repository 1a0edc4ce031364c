import NIOCore
import WireCodec

extension SessionCore {
    /// Applies an application command received from `peer`, on either channel: the payloads of any application
    /// here, the rest by the application that takes its kind.
    func handleApplication(_ message: Message, from peer: PeerRecord, reliable: Bool) {
        switch message {
        case .data(let bytes):
            events.yield(.data(from: peer.id, bytes: bytes, reliable: reliable))
        case .streamOpen(let open):
            receivedStreamOpen(open, from: peer)
        case .streamChunk(let chunk):
            receivedStreamChunk(chunk, from: peer)
        case .streamCredit(let credit):
            receivedStreamCredit(credit, from: peer)
        case .streamEnd(let end):
            receivedStreamEnd(end, from: peer)
        default:
            guard let application = applications.application(for: message) else {
                logger.debug("ignoring \(message.kind) from \(peer.name): no application takes it")
                return
            }
            application.received(message, from: peer.id, reliably: reliable)
        }
    }

    // MARK: - Round trips

    /// Measures one round trip to `peer` on the given channel: on its link of `transport` (any handshaken one,
    /// active or standby), or on its active link.
    func ping(
        _ id: PeerID, unreliable: Bool, payloadSize: Int = 0, transport: String? = nil
    ) -> EventLoopFuture<TimeAmount> {
        guard (0...Wire.maxPingPayloadLength).contains(payloadSize) else {
            return loop.makeFailedFuture(
                SessionError(.invalidArgument, "ping payload must be 0...\(Wire.maxPingPayloadLength) bytes"))
        }
        guard let peer = peers[id], peer.isConnected else {
            return loop.makeFailedFuture(SessionError(.noSuchPeer, "\(id) is not connected"))
        }
        // The active link unless a transport is named (no array per ping on that path).
        let chosen =
            transport == nil
            ? peer.dataLink ?? peer.handshakenLinks.first
            : ([peer.dataLink].compactMap { $0 } + peer.handshakenLinks).first { $0.transport.name == transport }
        guard let link = chosen else {
            let have = Set(peer.handshakenLinks.map(\.transport.name)).sorted().joined(separator: ", ")
            return loop.makeFailedFuture(
                SessionError(.noSuchPeer, "\(peer.name) has no \(transport ?? "") link (it has: \(have))"))
        }
        let nonce = nextNonce
        nextNonce &+= 1
        if nextNonce == 0 { nextNonce = 1 }  // 0 marks heartbeats
        let promise = loop.makePromise(of: TimeAmount.self)
        let now = NIODeadline.now()
        pendingPings[nonce] = PendingPing(promise: promise, sentAt: now, peer: id)
        let ping = Message.ping(
            Ping(nonce: nonce, timestamp: nowMicros(now), payload: [UInt8](repeating: 0, count: payloadSize)))
        if unreliable && peer.route == .udp && link === peer.dataLink {
            sendDatagram(ping, to: peer)
        } else {
            write(ping, on: link)
        }
        return promise.futureResult
    }

    /// `count` round trips, each ping sent from the loop as the previous pong arrives.
    func measureRoundTrips(
        _ id: PeerID, count: Int, unreliable: Bool, payloadSize: Int, transport: String?
    ) -> EventLoopFuture<[TimeAmount]> {
        final class Series {
            var samples: [TimeAmount] = []
        }
        let series = Series()
        series.samples.reserveCapacity(count)
        func step(_ remaining: Int) -> EventLoopFuture<[TimeAmount]> {
            guard remaining > 0 else { return loop.makeSucceededFuture(series.samples) }
            return ping(id, unreliable: unreliable, payloadSize: payloadSize, transport: transport)
                .assumeIsolated()
                .flatMap { roundTrip in
                    series.samples.append(roundTrip)
                    return step(remaining - 1)
                }
                .nonisolated()
        }
        return step(count)
    }

    /// A pong on a stream link: a measurement's answer, or a heartbeat's round trip on that path.
    func receivedPong(_ pong: Ping, on link: Link) {
        let now = NIODeadline.now()
        if completePing(pong.nonce, at: now) { return }
        let sample = Int64(nowMicros(now)) - Int64(pong.timestamp)
        guard sample >= 0 else { return }
        link.rtt.add(.microseconds(sample))
        peer(of: link)?.prober.reliablePingAnswered(sentAt: now - .microseconds(sample), at: now)
    }

    /// A pong of a datagram probe.
    func receivedPong(_ pong: Ping, from peer: PeerRecord) {
        let now = NIODeadline.now()
        if completePing(pong.nonce, at: now) { return }
        let sample = Int64(nowMicros(now)) - Int64(pong.timestamp)
        guard sample >= 0 else { return }
        peer.datagramRTT.add(.microseconds(sample))
    }

    /// Fails the pings whose pong is overdue (from the tick).
    func expirePings(now: NIODeadline) {
        guard !pendingPings.isEmpty else { return }
        for (nonce, pending) in pendingPings.filter({ now - $0.value.sentAt > Self.pingTimeout }) {
            pendingPings[nonce] = nil
            pending.promise.fail(SessionError(.timedOut, "no answer from \(pending.peer) within 2 s"))
        }
    }

    private func completePing(_ nonce: UInt32, at now: NIODeadline) -> Bool {
        guard nonce != 0, let pending = pendingPings.removeValue(forKey: nonce) else { return false }
        pending.promise.succeed(now - pending.sentAt)
        return true
    }
}
