import NIOCore
import WireCodec

extension SessionCore {
    /// Applies an application command received from `peer`, on either channel.
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
        case .handshake(let name):
            if peer.name != name {
                peer.name = name
                publishState(of: peer)
            }
        case .negotiate, .negotiateConfirm:
            // The original app raced timestamps for player indexes; here they follow from membership.
            break
        case .layout(let entries):
            let announced = PlayerLayout(entries: entries)
            if announced != layout {
                logger.debug("layout from \(peer.name) differs from ours while membership settles")
            }
        case .counterIncrement(let count):
            receivedIncrement(count, from: peer)
        case .counterState(let entries):
            receivedCounterState(entries, from: peer)
        case .pickUp(let view):
            events.yield(.pickUp(view: view, by: peer.id))
            if layout.coordinator == localPeer { grant(view, to: peer.id) }
        case .bubbleState(let state):
            guard layout.coordinator == peer.id else {
                logger.debug("ignoring bubble state from \(peer.name), which is not the coordinator")
                return
            }
            let previous = bubbles.bubbles[Int(min(state.view, UInt8(BubbleBoard.count - 1)))].holder
            if bubbles.apply(state), previous != state.holder {
                events.yield(.holder(view: state.view, holder: state.holder))
            }
        case .move(let move):
            if bubbles.apply(move, from: peer.id) {
                events.yield(.move(view: move.view, x: move.x, y: move.y, by: peer.id))
            }
        case .drop(let drop):
            if bubbles.apply(drop, from: peer.id) {
                events.yield(.drop(view: drop.view, x: drop.x, y: drop.y, by: peer.id))
                events.yield(.holder(view: drop.view, holder: nil))
            }
        default:
            logger.debug("ignoring \(message.kind) from \(peer.name)")
        }
    }

    /// Coordinator: grants `view` to `peer` if it is free, and tells everyone.
    func grant(_ view: UInt8, to id: PeerID) {
        guard let state = bubbles.request(view, by: id) else { return }
        events.yield(.holder(view: view, holder: id))
        for peer in peers.values where peer.isConnected { sendSequenced(.bubbleState(state), to: peer) }
    }

    // MARK: - Local actions

    /// Asks for a bubble: granted at once when this peer coordinates, otherwise when the coordinator says so.
    func pickUp(_ view: UInt8) throws(SessionError) {
        guard BubbleBoard.isValid(view) else { throw SessionError(.invalidArgument, "no bubble \(view)") }
        events.yield(.pickUp(view: view, by: localPeer))
        if layout.coordinator == localPeer {
            grant(view, to: localPeer)
        }
        for peer in peers.values where peer.isConnected { sendSequenced(.pickUp(view: view), to: peer) }
    }

    /// Moves a bubble this peer holds; the move goes unreliably to every connected peer.
    func move(_ view: UInt8, x: Float, y: Float) throws(SessionError) {
        guard BubbleBoard.isValid(view) else { throw SessionError(.invalidArgument, "no bubble \(view)") }
        guard x.isFinite, y.isFinite else { throw SessionError(.invalidArgument, "coordinates must be finite") }
        guard bubbles.bubbles[Int(view)].holder == localPeer else {
            throw SessionError(.invalidArgument, "bubble \(view) is not held by this peer")
        }
        moveSequence[Int(view)] &+= 1
        let move = Move(view: view, x: x, y: y, sequence: moveSequence[Int(view)])
        _ = bubbles.apply(move, from: localPeer)
        events.yield(.move(view: view, x: x, y: y, by: localPeer))
        for peer in peers.values where peer.isConnected { sendUnreliable(.move(move), to: peer) }
    }

    /// Drops a bubble this peer holds at its final position; the drop goes reliably to everyone.
    func drop(_ view: UInt8, x: Float, y: Float) throws(SessionError) {
        guard BubbleBoard.isValid(view) else { throw SessionError(.invalidArgument, "no bubble \(view)") }
        guard x.isFinite, y.isFinite else { throw SessionError(.invalidArgument, "coordinates must be finite") }
        let drop = Drop(view: view, x: x, y: y)
        guard bubbles.apply(drop, from: localPeer) else {
            throw SessionError(.invalidArgument, "bubble \(view) is not held by this peer")
        }
        events.yield(.drop(view: view, x: x, y: y, by: localPeer))
        events.yield(.holder(view: view, holder: nil))
        broadcastSequenced(.drop(drop))
    }

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
        let candidates = [peer.dataLink].compactMap { $0 } + peer.handshakenLinks
        guard let link = candidates.first(where: { transport == nil || $0.transport.name == transport }) else {
            let have = Set(peer.handshakenLinks.map(\.transport.name)).sorted().joined(separator: ", ")
            return loop.makeFailedFuture(
                SessionError(.noSuchPeer, "\(peer.name) has no \(transport ?? "") link (it has: \(have))"))
        }
        let nonce = nextNonce
        nextNonce &+= 1
        if nextNonce == 0 { nextNonce = 1 }  // 0 marks heartbeats
        let promise = loop.makePromise(of: TimeAmount.self)
        let bound = NIOLoopBound(self, eventLoop: loop)
        let timeout = loop.scheduleTask(in: .seconds(2)) {
            let pending = bound.value.pendingPings.removeValue(forKey: nonce)
            pending?.promise.fail(SessionError(.timedOut, "no answer from \(id) within 2 s"))
        }
        let now = NIODeadline.now()
        pendingPings[nonce] = PendingPing(promise: promise, sentAt: now, timeout: timeout)
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
    }

    /// A pong of a datagram probe.
    func receivedPong(_ pong: Ping, from peer: PeerRecord) {
        let now = NIODeadline.now()
        if completePing(pong.nonce, at: now) { return }
        let sample = Int64(nowMicros(now)) - Int64(pong.timestamp)
        guard sample >= 0 else { return }
        peer.datagramRTT.add(.microseconds(sample))
    }

    private func completePing(_ nonce: UInt32, at now: NIODeadline) -> Bool {
        guard nonce != 0, let pending = pendingPings.removeValue(forKey: nonce) else { return false }
        pending.timeout.cancel()
        pending.promise.succeed(now - pending.sentAt)
        return true
    }
}
