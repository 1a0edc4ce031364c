import Logging
import NIOCore
import WireCodec

/// The opener's side of payloads: the application's data waiting for room on each peer's reliable channel, and the
/// streams and resources this peer opened, sent as the receiver's credit and the channel's room allow. Part of the
/// ``StreamMultiplexer``.
final class OutgoingStreams {
    weak var delegate: (any StreamMultiplexerDelegate)?
    private let loop: any EventLoop
    private let logger: Logger

    private var outgoing: [StreamKey: OutgoingStreamState] = [:]
    private var nextStreamID: UInt32 = 1
    /// Why recently ended streams ended, for the writer's next call: each for ``endedStreamMemory`` (and at most 256).
    private var endedStreams: [StreamKey: SessionError] = [:]
    /// How long why a stream ended is kept for a call of its writer that comes after the end.
    static let endedStreamMemory = TimeAmount.seconds(5)
    /// Applications' data waiting for room on each peer's reliable channel, in order.
    /// Looked up for every message sent; not checked for exclusive access at run time (changed by this class alone,
    /// never across a call that could reach it again).
    @exclusivity(unchecked) private var outboxes: [PeerID: [PendingData]] = [:]

    /// The entries of its tables, by name (``Session/tableSizes()``): the streams open, those whose end is kept for a
    /// late write (at most 256), the peers with data waiting for room.
    var tableSizes: [String: Int] {
        ["streamsOutgoing": outgoing.count, "streamsEnded": endedStreams.count, "dataOutboxes": outboxes.count]
    }

    init(loop: any EventLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
    }

    private func name(of peer: PeerID) -> String { delegate?.name(of: peer) ?? "" }

    // MARK: - Data

    /// Sends an application's reliable `data` to `peer` (a member): at once when its reliable channel has room and
    /// nothing waits for it, otherwise after what waits. Returns nil when it is on the channel already, otherwise the
    /// future of its turn (it succeeds as acknowledgements free room).
    func sendData(_ payloads: [ByteBuffer], to peer: PeerID) -> EventLoopFuture<Void>? {
        var next = 0
        if outboxes[peer] == nil {
            while next < payloads.count, sendIfRoom(payloads[next], to: peer) { next += 1 }
            if next == payloads.count { return nil }
        }
        // One promise for the batch, on its last message: the messages go in order.
        let promise = loop.makePromise(of: Void.self)
        var outbox = outboxes.removeValue(forKey: peer) ?? []
        for index in next..<payloads.count {
            outbox.append(PendingData(payload: payloads[index], promise: index == payloads.count - 1 ? promise : nil))
        }
        outboxes[peer] = outbox
        return promise.futureResult
    }

    /// Sends `payload` if `peer`'s reliable channel keeps the room reserved for the session's own messages.
    private func sendIfRoom(_ payload: ByteBuffer, to peer: PeerID) -> Bool {
        delegate?.sendData(
            payload, to: peer, ifRoomBeyond: StreamMultiplexer.reservedReplayBytes,
            messages: StreamMultiplexer.reservedReplayMessages) ?? false
    }

    /// Whether data for `peer` waits for room on its reliable channel.
    func hasWaitingData(for peer: PeerID) -> Bool {
        outboxes[peer] != nil
    }

    /// Acknowledgements or a resume freed room on `peer`'s reliable channel: waiting data goes first, then chunks.
    func roomFreed(for peer: PeerID) {
        if var outbox = outboxes.removeValue(forKey: peer) {
            var sent = 0
            while sent < outbox.count, sendIfRoom(outbox[sent].payload, to: peer) { sent += 1 }
            let promises = outbox[..<sent].compactMap(\.promise)
            outbox.removeFirst(sent)
            if !outbox.isEmpty { outboxes[peer] = outbox }
            // Completed once the outbox is as it stays: a waiting caller goes on from there.
            for promise in promises { promise.succeed() }
            guard outbox.isEmpty else { return }
        }
        for stream in outgoing.values where stream.key.peer == peer && stream.parked != nil {
            pump(stream)
        }
    }

    // MARK: - Opener

    /// Opens a stream to `peer`, a member; succeeds with the stream's number and where the receiver wants the bytes to
    /// start (0, or what a partial file of a resource holds), once the receiver granted its first credit.
    func open(
        to peer: PeerID, kind: StreamKind, name: String, size: UInt64, resumeKey: [UInt8],
        onProgress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> EventLoopFuture<(UInt32, UInt64)> {
        guard name.utf8.count <= Wire.maxStreamNameLength, !name.isEmpty else {
            return loop.makeFailedFuture(
                SessionError(.invalidArgument, "a stream name is 1...\(Wire.maxStreamNameLength) bytes of UTF-8"))
        }
        let streamID = nextStreamID
        nextStreamID &+= 1
        if nextStreamID == 0 { nextStreamID = 1 }
        if kind == .resource, resumeKey.count != Wire.resumeKeyLength {
            return loop.makeFailedFuture(SessionError(.invalidArgument, "a resource needs a resume key"))
        }
        let key = StreamKey(peer: peer, id: streamID)
        let promise = loop.makePromise(of: UInt64.self)
        let stream = OutgoingStreamState(key: key, kind: kind, name: name, size: size, opened: promise)
        stream.onProgress = onProgress
        outgoing[key] = stream
        let key16 =
            resumeKey.count == Wire.resumeKeyLength ? resumeKey : [UInt8](repeating: 0, count: Wire.resumeKeyLength)
        delegate?.sendSequenced(
            .streamOpen(StreamOpen(id: streamID, kind: kind, name: name, size: size, resumeKey: key16)), to: peer)
        logger.debug(
            "opened \(kind) stream \(streamID) \"\(name)\" to \(self.name(of: peer))",
            metadata: ["peer": "\(peer)", "size": "\(size)"])
        return promise.futureResult.map { (streamID, $0) }
    }

    /// Queues `pieces` on an open stream, in order; succeeds once every byte is on the reliable channel. A piece of at
    /// most `chunkSize` bytes goes as one chunk without a copy.
    func write(_ key: StreamKey, _ pieces: [[UInt8]]) -> EventLoopFuture<Void> {
        guard let stream = outgoing[key], case .open = stream.phase else {
            return loop.makeFailedFuture(notOpen(key))
        }
        guard stream.parked == nil else {
            return loop.makeFailedFuture(SessionError(.invalidArgument, "one write at a time on a stream"))
        }
        let count = pieces.reduce(0) { $0 + $1.count }
        if stream.kind == .resource, stream.sent + UInt64(count) > stream.size {
            return loop.makeFailedFuture(SessionError(.invalidArgument, "more bytes than the resource's size"))
        }
        let promise = loop.makePromise(of: Void.self)
        stream.parked = OutgoingStreamState.Write(pieces: pieces.filter { !$0.isEmpty }, promise: promise)
        pump(stream)
        return promise.futureResult
    }

    /// Sends what credit and the reliable channel's room allow of a stream's waiting write.
    private func pump(_ stream: OutgoingStreamState) {
        guard var parked = stream.parked else { return }
        let peer = stream.key.peer
        while parked.piece < parked.pieces.count {
            let piece = parked.pieces[parked.piece]
            let allowed = stream.limit > stream.sent ? stream.limit - stream.sent : 0
            let count = min(StreamMultiplexer.chunkSize, piece.count - parked.done, Int(min(allowed, UInt64(Int.max))))
            guard count > 0, (delegate?.unacknowledgedBytes(to: peer) ?? .max) < StreamMultiplexer.bulkLimit,
                outboxes[peer]?.isEmpty ?? true
            else { break }
            let chunk = count == piece.count ? piece : Array(piece[parked.done..<(parked.done + count)])
            delegate?.sendSequenced(
                .streamChunk(StreamChunk(id: stream.key.id, offset: stream.sent, bytes: chunk)), to: peer)
            stream.sent += UInt64(count)
            parked.done += count
            if parked.done == piece.count {
                parked.piece += 1
                parked.done = 0
            }
        }
        if parked.piece == parked.pieces.count {
            stream.parked = nil
            parked.promise.succeed()
        } else {
            stream.parked = parked
        }
        if stream.kind == .resource { reportSending(stream, phase: .inProgress) }
    }

    /// Ends an open stream: for a resource, with its digest, and succeeds once the receiver verified it.
    func finish(_ key: StreamKey, digest: [UInt8]) -> EventLoopFuture<Void> {
        guard let stream = outgoing[key], case .open = stream.phase else {
            return loop.makeFailedFuture(notOpen(key))
        }
        delegate?.sendStreamEnd(key.id, to: key.peer, fromOpener: true, .finished, digest: digest)
        guard stream.kind == .resource else {
            outgoing[key] = nil
            return loop.makeSucceededVoidFuture()
        }
        let promise = loop.makePromise(of: Void.self)
        stream.phase = .finishing(promise)
        return promise.futureResult
    }

    /// Cancels a stream this peer opened; the receiver is told, and a waiting write fails.
    func cancelOutgoing(_ key: StreamKey, reason: String) {
        guard let stream = outgoing.removeValue(forKey: key) else { return }
        delegate?.sendStreamEnd(key.id, to: key.peer, fromOpener: true, .cancelled, reason: reason)
        fail(stream, SessionError(.cancelled, "cancelled: \(reason)"))
        if stream.kind == .resource { reportSending(stream, phase: .cancelled(byPeer: false, reason: reason)) }
    }

    private func notOpen(_ key: StreamKey) -> SessionError {
        endedStreams[key] ?? SessionError(.cancelled, "stream \(key.id) to \(key.peer) is not open")
    }

    private func fail(_ stream: OutgoingStreamState, _ error: SessionError) {
        if endedStreams.count >= 256 { endedStreams.removeAll() }
        endedStreams[stream.key] = error
        let key = stream.key
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(in: Self.endedStreamMemory) { bound.value.endedStreams[key] = nil }
        stream.parked?.promise.fail(error)
        stream.parked = nil
        switch stream.phase {
        case .opening(let promise): promise.fail(error)
        case .finishing(let promise): promise.fail(error)
        case .open: break
        }
    }

    private func reportSending(_ stream: OutgoingStreamState, phase: TransferProgress.Phase) {
        if case .inProgress = phase {
            let now = NIODeadline.now()
            guard now - stream.lastProgress >= StreamMultiplexer.progressInterval else { return }
            stream.lastProgress = now
        }
        let progress = TransferProgress(
            id: TransferID(peer: stream.key.peer, stream: stream.key.id, direction: .sending),
            name: stream.name, bytes: stream.sent, total: stream.size, resumedFrom: stream.resumedFrom,
            phase: phase)
        stream.onProgress?(progress)
        delegate?.emit(.transfer(progress))
    }

    // MARK: - What the receiver says

    /// The receiver granted credit: the first starts the stream, later ones let more chunks go.
    func receivedCredit(_ credit: StreamCredit, from peer: PeerID) {
        let key = StreamKey(peer: peer, id: credit.id)
        guard let stream = outgoing[key] else { return }
        if case .opening(let promise) = stream.phase {
            guard stream.kind != .resource || credit.received <= stream.size else {
                cancelOutgoing(key, reason: "the receiver holds more than the resource")
                return
            }
            stream.phase = .open
            stream.sent = credit.received
            stream.resumedFrom = credit.received
            stream.limit = credit.limit
            if stream.kind == .resource { reportSending(stream, phase: .started) }
            promise.succeed(credit.received)
            return
        }
        stream.limit = max(stream.limit, credit.limit)
        pump(stream)
    }

    /// The receiver ended stream `end.id`: finished (verified), declined, cancelled or failed.
    func receivedEnd(_ end: StreamEnd, from peer: PeerID) {
        let key = StreamKey(peer: peer, id: end.id)
        guard let stream = outgoing.removeValue(forKey: key) else { return }
        switch (stream.phase, end.status) {
        case (.finishing(let promise), .finished):
            promise.succeed()
            reportSending(stream, phase: .finished(path: nil, sha256: end.digest.hexString))
        default:
            let code: SessionError.Code =
                switch end.status {
                case .declined: .declined
                case .cancelled: .cancelled
                default: .transferFailed
                }
            let name = name(of: peer)
            fail(stream, SessionError(code, "\(name.isEmpty ? "\(peer)" : name) \(end.describe)"))
            if stream.kind == .resource {
                reportSending(
                    stream,
                    phase: end.status == .cancelled
                        ? .cancelled(byPeer: true, reason: end.reason) : .failed(end.describe))
            }
        }
    }

    /// Every stream to `peer` fails (it restarted or left), and what waits for room on its channel.
    func peerGone(_ peer: PeerID, reason: String) {
        for (key, stream) in outgoing where key.peer == peer {
            outgoing[key] = nil
            fail(stream, SessionError(.transferFailed, reason))
            if stream.kind == .resource { reportSending(stream, phase: .failed(reason)) }
        }
        for pending in outboxes.removeValue(forKey: peer) ?? [] {
            pending.promise?.fail(SessionError(.transferFailed, reason))
        }
    }

    /// What waits for `peer` (away too long) fails: its streams end, the receiver told when it is back, and the data
    /// waiting for room on its channel.
    func peerAway(_ peer: PeerID, reason: String) {
        let error = SessionError(.timedOut, reason)
        for (key, stream) in outgoing where key.peer == peer {
            outgoing[key] = nil
            delegate?.sendStreamEnd(key.id, to: peer, fromOpener: true, .failed, reason: reason)
            fail(stream, error)
            if stream.kind == .resource { reportSending(stream, phase: .failed(reason)) }
        }
        for pending in outboxes.removeValue(forKey: peer) ?? [] { pending.promise?.fail(error) }
    }

    /// Whether a stream of this key is under way.
    func has(_ key: StreamKey) -> Bool { outgoing[key] != nil }

    /// The resources under way.
    var transfers: [TransferProgress] {
        outgoing.values.filter { $0.kind == .resource }.map { stream in
            TransferProgress(
                id: TransferID(peer: stream.key.peer, stream: stream.key.id, direction: .sending), name: stream.name,
                bytes: stream.sent, total: stream.size, resumedFrom: stream.resumedFrom, phase: .inProgress)
        }
    }
}
