import NIOCore
import WireCodec

/// What a link reads, once its machine let it through: data messages in the read's batch, link control, sequenced
/// commands to their application, and the acknowledgement at the read's end.
extension SessionCore {
    /// An application's `data` message read on `link`: to the subscribers, in this read's batch, when the link is
    /// the peer's active one (the common case, with no action list); as any other message otherwise.
    func receivedData(_ payload: ByteBuffer, on link: Link) {
        guard link.isOpen, isRunningNow else { return }
        link.received(at: .now())
        guard link.machine.isActive, let peer = peers.peer(of: link), peer.active === link else {
            return perform(link.step { $0.received(.data(Array(payload.readableBytesView))) }, on: link)
        }
        peer.receivedSequenced(payloadBytes: payload.readableBytes)
        events.yieldData(payload, from: peer.id, reliable: true)
    }

    /// A read of `link` ended: its data messages go to the subscribers, and what it brought is acknowledged if that
    /// is 64 messages or ``StreamMultiplexer/ackAfterBytes`` of payload since the last acknowledgement (once per read,
    /// not once per message that crosses the line: a read of four 60 KiB messages is acknowledged once).
    func endOfRead(on link: Link?) {
        events.flush()
        guard let link, let peer = peers.peer(of: link), peer.active === link, link.isOpen else { return }
        if peer.reliable.receivedSinceAck >= 64 || peer.unacknowledgedBytes >= StreamMultiplexer.ackAfterBytes {
            acknowledge(peer, on: link)
        }
    }

    /// A message the link's machine delivers: link control, or (on the active link) a sequenced command.
    func deliver(_ message: Message, on link: Link) {
        switch message {
        case .ping(let ping):
            writer.write(.pong(ping), on: link)
        case .pong(let pong):
            receivedPong(pong, on: link)
        case .ack(let sequence):
            if let peer = peers.peer(of: link) {
                peer.withReliable { $0.peerAcknowledged(sequence) }
                sender.roomFreed(for: peer)
            }
        case .members(let members):
            if let peer = peers.peer(of: link) { self.members.received(members, from: peer) }
        case .trust(let statements):
            if peers.peer(of: link) != nil { trust.received(statements) }
        default:
            guard let peer = peers.peer(of: link), peer.active === link else { return }
            let payloadBytes: Int
            switch message {
            case .streamChunk(let chunk): payloadBytes = chunk.bytes.count
            case .data(let bytes): payloadBytes = bytes.count
            default: payloadBytes = 0
            }
            peer.receivedSequenced(payloadBytes: payloadBytes)  // acknowledged at the read's end, or by the tick
            do throws(WireError) {
                try handleCommand(message, from: peer, reliably: true)
            } catch {
                // Malformed for its application, as a malformed frame is for the codec: no bye.
                gate.rejected(link, "malformed \(message.kind): \(error)")
                gate.close(link, reason: "malformed \(message.kind)")
            }
        }
    }

    /// Acknowledges everything received from `peer`.
    func acknowledge(_ peer: PeerRecord, on link: Link) {
        writer.write(.ack(sequence: peer.makeAck()), on: link)
    }

    /// A command from `peer`, on either channel: the payloads of any application here, the rest by the application
    /// that takes it, which throws when it is malformed.
    func handleCommand(_ message: Message, from peer: PeerRecord, reliably: Bool) throws(WireError) {
        switch message {
        case .data(let bytes):
            events.yieldData(ByteBuffer(bytes: bytes), from: peer.id, reliable: reliably)
            if !reliably { events.flush() }  // a datagram is a read of its own
        case .durableData(let durable):
            // A copy its sender resent after a restart is dropped (docs/wire-format.md, section 10.5).
            guard receipts.take(durable.id, from: peer.id) else { return }
            events.yieldData(ByteBuffer(bytes: durable.bytes), from: peer.id, reliable: true)
        case .streamOpen, .streamChunk, .streamCredit, .streamEnd:
            streams.received(message, from: peer.id)
        default:
            guard let application = applications.application(for: message) else {
                logger.debug("ignoring \(message.kind) from \(peer.name): no application takes it")
                return
            }
            try application.received(message, from: peer.id, reliably: reliably)
        }
    }
}
