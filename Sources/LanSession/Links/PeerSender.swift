import Logging
import NIOCore
import WireCodec

/// What ``PeerSender`` asks of the core: the applications told when their state messages were refused.
protocol PeerSenderDelegate: AnyObject {
    /// State messages to `peer` were refused for want of room and there is room again: the applications send it
    /// their state anew.
    func peerMissedMessages(_ peer: PeerID)
    /// A peer opened a byte stream that is taken: the application reads it through a handle.
    func byteStreamOpened(from peer: PeerID, name: String, id: UInt32)
}

/// What goes to peers: sequenced messages on the reliable channel, unreliable ones, the application's data, streams
/// and pings. It numbers nothing itself (``LinkWriter`` does) and routes nothing itself (``DatagramRouter`` does): it
/// chooses the channel, checks the limits and the room, and tells what was refused.
final class PeerSender {
    private let loop: any EventLoop
    private let logger: Logger
    private let writer: LinkWriter
    private let peers: PeerTable
    private let datagrams: DatagramRouter
    private let streams: StreamMultiplexer
    private let pings: Pings
    private let events: SessionEventQueue
    private let durable: DurableLog
    weak var delegate: (any PeerSenderDelegate)?

    init(
        loop: any EventLoop, logger: Logger, writer: LinkWriter, peers: PeerTable, datagrams: DatagramRouter,
        streams: StreamMultiplexer, pings: Pings, events: SessionEventQueue, durable: DurableLog
    ) {
        self.loop = loop
        self.logger = logger
        self.writer = writer
        self.peers = peers
        self.datagrams = datagrams
        self.streams = streams
        self.pings = pings
        self.events = events
        self.durable = durable
    }

    /// Sends a sequenced message to `peer` (``LinkWriter/sendSequenced(_:to:as:)``); a refused one is told once per
    /// refusal.
    func sendSequenced(_ message: Message, to peer: PeerRecord, as content: ReliableChannel.Content) {
        switch writer.sendSequenced(message, to: peer, as: content) {
        case .sent, .refused(firstRefusal: false):
            break
        case .unencodable(let error):
            logger.debug("cannot encode \(message.kind): \(error)")
        case .refused(firstRefusal: true):
            let notice = SessionNotice.replayBufferOverflowed(peer.id, name: peer.name)
            logger.debug(
                "\(notice)", metadata: ["peer": "\(peer.id)", "unacknowledged": "\(peer.reliable.replayBytes)"])
            if events.countNotice(.replayOverflow).report { events.yield(.notice(notice)) }
        }
    }

    /// Sends an application's `data` payload to `peer` on the reliable channel.
    func sendSequencedData(_ payload: ByteBuffer, to peer: PeerRecord) {
        do {
            try writer.sendSequencedData(payload, to: peer)
        } catch {
            logger.debug("cannot send data: \(error)")
        }
    }

    /// Room came back on `peer`'s reliable channel (acknowledgements, a resume): waiting payloads go, and when state
    /// messages were refused, the applications send the peer their state again.
    func roomFreed(for peer: PeerRecord) {
        // Data that waited for this room goes in one write at the end of this turn of the loop, not its first message
        // alone before.
        if streams.hasWaitingData(for: peer.id), let link = peer.dataLink { writer.openBurst(on: link) }
        streams.roomFreed(for: peer.id)
        durable.acknowledged(by: peer.id, below: peer.reliable.firstUnacknowledged)
        guard peer.withReliable({ $0.takeResynchronisation() }) else { return }
        logger.debug("re-synchronising \(peer.name) after refused state messages", metadata: ["peer": "\(peer.id)"])
        delegate?.peerMissedMessages(peer.id)
    }

    /// Sends `message` on the unreliable channel if it gets through and fits a datagram, on the reliable link otherwise.
    func sendUnreliable(_ message: Message, to peer: PeerRecord) {
        // One too large for a datagram goes reliably: what may be lost may also arrive.
        guard datagrams.route(of: peer.id) == .udp, datagrams.send(message, to: peer.id) else {
            return sendSequenced(message, to: peer, as: .state)
        }
    }

    /// Sends an application's messages to `ids` (every member when nil), in order. Reliable data waits, per peer, for
    /// room on the reliable channel (it is never dropped); unreliable data goes as a datagram where they get through.
    /// Returns nil when the messages are on every peer's channel already, otherwise the future of the peers whose
    /// replay buffer is short of room (it succeeds as acknowledgements free room).
    func sendData(
        _ payloads: [ByteBuffer], to ids: [PeerID]?, reliable: Bool
    ) throws(SessionError) -> EventLoopFuture<Void>? {
        let limit = reliable ? Wire.maxDataLength : Wire.maxUnreliableDataLength
        for payload in payloads where payload.readableBytes > limit {
            throw SessionError(
                .messageTooLarge,
                "\(reliable ? "" : "unreliable ")data is at most \(limit) bytes; this is \(payload.readableBytes) "
                    + "(use a stream or a resource for more)")
        }
        // Every named peer is checked before anything goes. The targets are visited in place, not gathered in a new
        // array: one allocation less per call.
        if let ids {
            for id in ids { _ = try peers.member(id) }
        }
        func forEachTarget(_ body: (PeerRecord) -> Void) {
            guard let ids else { return peers.members.forEach(body) }
            for id in ids { if let peer = peers[id] { body(peer) } }
        }
        guard reliable else {
            for payload in payloads {
                let message = Message.data(Array(payload.readableBytesView))
                forEachTarget { peer in if peer.isConnected { sendUnreliable(message, to: peer) } }
            }
            return nil
        }
        // Usually one peer, or none, is short of room: an array only for more.
        var waiting: EventLoopFuture<Void>?
        var alsoWaiting: [EventLoopFuture<Void>] = []
        forEachTarget { peer in
            // A batch goes in one write at the end of this turn of the loop, not its first message alone before.
            if payloads.count > 1, let link = peer.dataLink { writer.openBurst(on: link) }
            guard let turn = streams.sendData(payloads, to: peer.id) else { return }
            if waiting == nil { waiting = turn } else { alsoWaiting.append(turn) }
        }
        guard let waiting, !alsoWaiting.isEmpty else { return waiting }
        return EventLoopFuture.andAllSucceed([waiting] + alsoWaiting, on: loop)
    }

    // MARK: - Durable messages

    /// Sends an application's durable messages to `ids` (every member when nil), in order: kept on the disk first
    /// (``DurableLog``), then sent. The future succeeds once they are on the disk.
    func sendDurable(_ payloads: [ByteBuffer], to ids: [PeerID]?) throws(SessionError) -> EventLoopFuture<Void> {
        for payload in payloads where payload.readableBytes > Wire.maxDataLength {
            throw SessionError(
                .messageTooLarge,
                "durable data is at most \(Wire.maxDataLength) bytes; this is \(payload.readableBytes)")
        }
        var targets: [PeerRecord] = []
        if let ids {
            for id in ids { targets.append(try peers.member(id)) }
        } else {
            targets = peers.members
        }
        for peer in targets where peer.isConnected && !peer.capabilities.contains(.durableData) {
            throw SessionError(.invalidArgument, "\(peer.name) (\(peer.id)) runs a version without durable messages")
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        return durable.keep(payloads, for: targets.map(\.id)).map { kept in
            for (peer, entry) in kept { bound.value.sendDurable(entry, to: peer) }
        }
    }

    /// Sends a kept durable message on `id`'s reliable channel, and notes its sequence number there.
    private func sendDurable(_ entry: DurableLog.Entry, to id: PeerID) {
        guard let peer = peers[id] else { return }
        let sequence = peer.reliable.nextSequence
        do {
            try writer.sendSequencedDurable(id: entry.id, payload: entry.payload, to: peer)
        } catch {
            // Its size was checked before it was kept; an id is never 0.
            return logger.debug("cannot send durable message \(entry.id): \(error)")
        }
        durable.sent(entry.id, to: id, sequence: sequence)
    }

    /// At the start, before anything else: what the log kept from before goes on the channels of its peers, which
    /// are members away until they connect.
    func sendKeptDurable() {
        for (id, entries) in durable.keptMessages {
            let peer = peers.record(for: id)
            if !peer.isMember { peer.remembered(name: peer.name) }
            for entry in entries { sendDurable(entry, to: id) }
        }
    }

    /// `peer` restarted: its channel starts over. The data that never left this process (`unsent`, with its old
    /// sequence numbers) and every durable message kept for it go again, in the order they had.
    func peerRestarted(_ peer: PeerRecord, unsent: [(sequence: UInt64, payload: ByteBuffer)]) {
        var data = unsent[...]
        for entry in durable.resend(to: peer.id) {
            while let next = data.first, next.sequence < entry.sequence ?? .max {
                sendSequencedData(next.payload, to: peer)
                data = data.dropFirst()
            }
            sendDurable(entry, to: peer.id)
        }
        for next in data { sendSequencedData(next.payload, to: peer) }
    }

    /// Opens a stream to a member (see ``StreamMultiplexer/open(to:kind:name:size:resumeKey:onProgress:)``).
    func openStream(
        to id: PeerID, kind: StreamKind, name: String, size: UInt64, resumeKey: [UInt8],
        onProgress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> EventLoopFuture<(UInt32, UInt64)> {
        guard peers[id]?.isMember == true else { return loop.makeFailedFuture(peers.noSuchMember(id)) }
        return streams.open(
            to: id, kind: kind, name: name, size: size, resumeKey: resumeKey, onProgress: onProgress)
    }

    /// Fails what waits for members away longer than the delivery timeout (see
    /// ``SessionConfiguration/deliveryTimeout``); what the application hands them later fails by the next tick.
    func expireDeliveries(now: NIODeadline, timeout: TimeAmount) {
        for peer in peers.all {
            guard let away = peer.away(at: now), away >= timeout else { continue }
            let seconds = Double(away.nanoseconds) / 1e9
            streams.peerAway(
                peer.id,
                reason: "\(peer.name.isEmpty ? "\(peer.id)" : peer.name) has been away for \(Int(seconds)) s "
                    + "(the delivery timeout is \(Int(Double(timeout.nanoseconds) / 1e9)) s)")
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
        guard let link = peer.pingLink(on: transport) else {
            let have = Set(peer.handshakenLinks.map(\.transport.name)).sorted().joined(separator: ", ")
            return loop.makeFailedFuture(
                SessionError(.noSuchPeer, "\(peer.name) has no \(transport ?? "") link (it has: \(have))"))
        }
        let (ping, roundTrip) = pings.start(to: id, payloadSize: payloadSize, at: .now())
        if unreliable && datagrams.route(of: id) == .udp && link === peer.dataLink {
            datagrams.send(ping, to: peer.id)
        } else {
            writer.write(ping, on: link)
        }
        return roundTrip
    }

    /// `count` round trips, each ping sent from the loop as the previous pong arrives.
    func measureRoundTrips(
        _ id: PeerID, count: Int, unreliable: Bool, payloadSize: Int, transport: String?
    ) -> EventLoopFuture<[TimeAmount]> {
        pings.measure(count: count) {
            self.ping(id, unreliable: unreliable, payloadSize: payloadSize, transport: transport)
        }
    }
}

/// The streams' sends, by peer id, through the same checks.
extension PeerSender: StreamMultiplexerDelegate {
    func sendSequenced(_ message: Message, to id: PeerID) {
        guard let peer = peers[id] else { return }
        sendSequenced(message, to: peer, as: .payload)
    }

    func sendSequenced(_ message: Message, to id: PeerID, ifRoomBeyond bytes: Int, messages: Int) -> Bool {
        guard let peer = peers[id],
            peer.reliable.hasRoom(bytes: message.approximateSize + bytes, messages: 1 + messages)
        else { return false }
        sendSequenced(message, to: peer, as: .payload)
        return true
    }

    func sendData(_ payload: ByteBuffer, to id: PeerID, ifRoomBeyond bytes: Int, messages: Int) -> Bool {
        guard let peer = peers[id],
            peer.reliable.hasRoom(bytes: payload.readableBytes + 8 + bytes, messages: 1 + messages)
        else { return false }
        sendSequencedData(payload, to: peer)
        return true
    }

    func unacknowledgedBytes(to id: PeerID) -> Int {
        peers[id]?.reliable.replayBytes ?? 0
    }

    func name(of id: PeerID) -> String { peers[id]?.name ?? "" }

    func emit(_ event: SessionEvent) {
        events.yield(event)
    }

    func byteStreamOpened(from peer: PeerID, name: String, id: UInt32) {
        delegate?.byteStreamOpened(from: peer, name: name, id: id)
    }
}
