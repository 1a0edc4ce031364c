import NIOCore
import WireCodec

/// Sequenced messages written for a peer: numbered on its reliable channel, kept for resending, and written if its
/// active link carries data (otherwise they wait in the replay buffer for the next activation's resend).
extension LinkWriter {
    /// What became of a sequenced message.
    enum Sequenced {
        /// Numbered (and written if the active link carries data).
        case sent
        /// Not encodable: dropped.
        case unencodable(WireError)
        /// A state message refused while the replay buffer is full; `firstRefusal` when it starts a refusal, which
        /// is told once.
        case refused(firstRefusal: Bool)
    }

    /// Sends a sequenced message to `peer`. A state message is refused while the peer's replay buffer is full (see
    /// ``ReliableChannel/Content``); the applications send their state again once there is room.
    ///
    /// The hot path: the frame is encoded once, straight into the peer's replay buffer, and the link writes a slice
    /// of it; in the steady state nothing is allocated and nothing leaves the event loop.
    func sendSequenced(_ message: Message, to peer: PeerRecord, as content: ReliableChannel.Content) -> Sequenced {
        let frame: ByteBuffer?
        let refusing = peer.reliable.mustResynchronise
        do {
            frame = try peer.withReliable { (reliable: inout ReliableChannel) throws(WireError) -> ByteBuffer? in
                try reliable.send(message, as: content)
            }
        } catch {
            return .unencodable(error)
        }
        guard let frame else { return .refused(firstRefusal: !refusing) }
        writeSequenced(.encoded(frame), to: peer)
        return .sent
    }

    /// Sends an application's `data` payload to `peer` on the reliable channel: numbered and kept for resending as
    /// the buffer it is (no copy), and written with its frame's header in front.
    func sendSequencedData(_ payload: ByteBuffer, to peer: PeerRecord) throws(WireError) {
        try peer.withReliable { (reliable: inout ReliableChannel) throws(WireError) in try reliable.sendData(payload) }
        writeSequenced(.data(payload), to: peer)
    }

    /// Sends a durable message numbered `id` to `peer` on the reliable channel: its frame is written once, from the
    /// payload the log keeps, into the peer's replay buffer, and the link writes a slice of it.
    func sendSequencedDurable(id: UInt64, payload: ByteBuffer, to peer: PeerRecord) throws(WireError) {
        let frame = try peer.withReliable { (reliable: inout ReliableChannel) throws(WireError) -> ByteBuffer in
            try reliable.sendDurable(id: id, payload: payload)
        }
        writeSequenced(.encoded(frame), to: peer)
    }

    /// Writes a numbered frame if `peer`'s active link carries data; otherwise it waits in the replay buffer.
    private func writeSequenced(_ frame: SequencedFrame, to peer: PeerRecord) {
        guard let link = peer.dataLink else { return }
        link.sent(at: .now())
        switch frame {
        case .encoded(let bytes): writeSoon(bytes, on: link)
        case .data(let payload): writeSoon(data: payload, on: link)
        }
        peer.withReliable { $0.wroteAll() }
    }
}
