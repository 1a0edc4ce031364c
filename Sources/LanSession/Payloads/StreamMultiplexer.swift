import Logging
import NIOCore
import WireCodec

/// What the stream multiplexer needs from the session.
protocol StreamMultiplexerDelegate: AnyObject {
    /// Sends a sequenced message to `peer`, a member: numbered, kept for resending, written when its link carries data.
    func sendSequenced(_ message: Message, to peer: PeerID)
    /// Whether `peer`'s reliable channel has room for `bytes` more in `messages` more frames.
    func reliableChannel(of peer: PeerID, hasRoomFor bytes: Int, messages: Int) -> Bool
    /// The bytes sent to `peer` and not acknowledged yet.
    func unacknowledgedBytes(to peer: PeerID) -> Int
    /// The display name of `peer`, for messages.
    func name(of peer: PeerID) -> String
    /// Hands `event` to the session's subscribers.
    func emit(_ event: SessionEvent)
    /// A peer opened a byte stream that is taken: the application reads it through a handle.
    func byteStreamOpened(from peer: PeerID, name: String, id: UInt32)
}

/// The payloads any application sends, on the reliable channel of each peer: its data messages, byte streams and
/// resources (files), with flow control by credit (docs/wire-format.md, section 10).
///
/// Data waits, per peer, for room on the reliable channel (it is never dropped); chunks of streams go while the
/// receiver's credit allows and the peer's unacknowledged bytes stay under ``bulkLimit``, and after any waiting data,
/// so that a transfer holds a small message back by that much at most. Resources land in the ``Inbox``, off the loop.
final class StreamMultiplexer {
    /// Bytes a byte stream's reader may fall behind by: the opener's credit beyond what was read.
    static let streamWindow: UInt64 = 256 << 10
    /// Bytes a resource's receiver takes beyond what is on its disk.
    static let resourceWindow: UInt64 = 2 << 20
    /// Unacknowledged bytes on a peer's reliable channel above which stream chunks wait.
    static let bulkLimit = 192 << 10
    /// Bytes per `streamChunk`.
    static let chunkSize = 60 << 10
    /// Room kept on the reliable channel for the session's own messages: applications' data waits beyond it.
    static let reservedReplayBytes = 256 << 10
    static let reservedReplayMessages = 1024
    /// Least time between two progress events of one transfer.
    static let progressInterval = TimeAmount.milliseconds(100)

    weak var delegate: (any StreamMultiplexerDelegate)?
    private let loop: any EventLoop
    private let logger: Logger
    /// Where resources land; nil: they are declined.
    private let inbox: Inbox?
    /// Whether byte streams opened by peers are taken.
    private let acceptsByteStreams: Bool

    /// Streams this peer opened, and streams peers opened to it.
    private var outgoing: [StreamKey: OutgoingStreamState] = [:]
    private var incoming: [StreamKey: IncomingStreamState] = [:]
    private var nextStreamID: UInt32 = 1
    /// Why recently ended streams this peer opened ended, for the writer's next call.
    private var endedStreams: [StreamKey: SessionError] = [:]
    /// Applications' data waiting for room on each peer's reliable channel, in order.
    private var outboxes: [PeerID: [PendingData]] = [:]

    init(
        loop: any EventLoop, logger: Logger, inbox: Inbox?, acceptsByteStreams: Bool
    ) {
        self.loop = loop
        self.logger = logger
        self.inbox = inbox
        self.acceptsByteStreams = acceptsByteStreams
    }

    private func name(of peer: PeerID) -> String { delegate?.name(of: peer) ?? "" }

    // MARK: - Data

    /// Sends an application's reliable `data` to `peers` (members): at once where the reliable channel has room,
    /// otherwise after what waits for that peer. Returns nil when it is on every peer's channel already, otherwise
    /// the future of the peers short of room (it succeeds as acknowledgements free room).
    func sendData(_ message: Message, to peers: [PeerID]) -> EventLoopFuture<Void>? {
        var waiting: [EventLoopFuture<Void>] = []
        let size = message.approximateSize
        for peer in peers {
            if outboxes[peer, default: []].isEmpty && hasRoomForData(peer, size: size) {
                delegate?.sendSequenced(message, to: peer)
            } else {
                let promise = loop.makePromise(of: Void.self)
                outboxes[peer, default: []].append(PendingData(message: message, promise: promise))
                waiting.append(promise.futureResult)
            }
        }
        return waiting.isEmpty ? nil : EventLoopFuture.andAllSucceed(waiting, on: loop)
    }

    private func hasRoomForData(_ peer: PeerID, size: Int) -> Bool {
        delegate?.reliableChannel(
            of: peer, hasRoomFor: size + Self.reservedReplayBytes, messages: 1 + Self.reservedReplayMessages) ?? false
    }

    /// Acknowledgements or a resume freed room on `peer`'s reliable channel: waiting data goes first, then chunks.
    func roomFreed(for peer: PeerID) {
        while let first = outboxes[peer]?.first, hasRoomForData(peer, size: first.message.approximateSize) {
            outboxes[peer]!.removeFirst()
            delegate?.sendSequenced(first.message, to: peer)
            first.promise.succeed()
        }
        if outboxes[peer]?.isEmpty == true { outboxes[peer] = nil }
        guard outboxes[peer] == nil else { return }
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
            let count = min(Self.chunkSize, piece.count - parked.done, Int(min(allowed, UInt64(Int.max))))
            guard count > 0, (delegate?.unacknowledgedBytes(to: peer) ?? .max) < Self.bulkLimit,
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
        end(key.id, to: key.peer, fromOpener: true, .finished, digest: digest)
        guard stream.kind == .resource else {
            outgoing[key] = nil
            return loop.makeSucceededVoidFuture()
        }
        let promise = loop.makePromise(of: Void.self)
        stream.phase = .finishing(promise)
        return promise.futureResult
    }

    /// Sends `streamEnd` for stream `id` to `peer`, the reason cut to its limit at a character boundary.
    private func end(
        _ id: UInt32, to peer: PeerID, fromOpener: Bool, _ status: StreamStatus, digest: [UInt8] = [],
        reason: String = ""
    ) {
        var cut = reason
        while cut.utf8.count > Wire.maxStreamReasonLength { cut.removeLast() }
        delegate?.sendSequenced(
            .streamEnd(StreamEnd(id: id, fromOpener: fromOpener, status: status, digest: digest, reason: cut)),
            to: peer)
    }

    /// Cancels a stream this peer opened; the receiver is told, and a waiting write fails.
    func cancelOutgoing(_ key: StreamKey, reason: String) {
        guard let stream = outgoing.removeValue(forKey: key) else { return }
        end(key.id, to: key.peer, fromOpener: true, .cancelled, reason: reason)
        fail(stream, SessionError(.cancelled, "cancelled: \(reason)"))
        if stream.kind == .resource { reportSending(stream, phase: .cancelled(byPeer: false, reason: reason)) }
    }

    private func notOpen(_ key: StreamKey) -> SessionError {
        endedStreams[key] ?? SessionError(.cancelled, "stream \(key.id) to \(key.peer) is not open")
    }

    private func fail(_ stream: OutgoingStreamState, _ error: SessionError) {
        if endedStreams.count >= 256 { endedStreams.removeAll() }
        endedStreams[stream.key] = error
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
            guard now - stream.lastProgress >= Self.progressInterval else { return }
            stream.lastProgress = now
        }
        let progress = TransferProgress(
            id: TransferID(peer: stream.key.peer, stream: stream.key.id, direction: .sending),
            name: stream.name, bytes: stream.sent, total: stream.size, resumedFrom: stream.resumedFrom,
            phase: phase)
        stream.onProgress?(progress)
        delegate?.emit(.transfer(progress))
    }

    // MARK: - Receiver

    /// The next chunk of a byte stream from a peer, waiting for one; nil at its end.
    func read(_ key: StreamKey) -> EventLoopFuture<[UInt8]?> {
        guard let stream = incoming[key], stream.kind == .bytes else {
            return loop.makeFailedFuture(SessionError(.cancelled, "stream \(key.id) from \(key.peer) is closed"))
        }
        guard stream.reader == nil else {
            return loop.makeFailedFuture(SessionError(.invalidArgument, "one reader at a time on a stream"))
        }
        if let chunk = stream.popChunk() {
            stream.consumed += UInt64(chunk.count)
            grantIfDue(stream, progress: stream.consumed, window: Self.streamWindow)
            return loop.makeSucceededFuture(chunk)
        }
        if let end = stream.end {
            incoming[key] = nil
            return end.status == .finished
                ? loop.makeSucceededFuture(nil)
                : loop.makeFailedFuture(SessionError(.cancelled, "the opener ended the stream: \(end.describe)"))
        }
        let promise = loop.makePromise(of: [UInt8]?.self)
        stream.reader = promise
        return promise.futureResult
    }

    /// Cancels a stream or a transfer from its receiver's side: the opener is told; a partial file is removed.
    func cancelIncoming(_ key: StreamKey, reason: String) {
        guard let stream = incoming.removeValue(forKey: key) else { return }
        end(key.id, to: key.peer, fromOpener: false, .cancelled, reason: reason)
        stream.reader?.fail(SessionError(.cancelled, "cancelled: \(reason)"))
        stream.reader = nil
        if stream.kind == .resource {
            if let file = stream.file { inbox?.remove(file) }
            reportReceiving(stream, phase: .cancelled(byPeer: false, reason: reason))
        }
    }

    /// Cancels a transfer of either direction by its id.
    func cancelTransfer(_ id: TransferID, reason: String) throws(SessionError) {
        let key = StreamKey(peer: id.peer, id: id.stream)
        switch id.direction {
        case .sending:
            guard outgoing[key] != nil else { throw SessionError(.noSuchTransfer, "no transfer \(id) under way") }
            cancelOutgoing(key, reason: reason)
        case .receiving:
            guard incoming[key] != nil else { throw SessionError(.noSuchTransfer, "no transfer \(id) under way") }
            cancelIncoming(key, reason: reason)
        }
    }

    /// Every transfer of a resource under way, both directions.
    var transfers: [TransferProgress] {
        let sending = outgoing.values.filter { $0.kind == .resource }.map { stream in
            TransferProgress(
                id: TransferID(peer: stream.key.peer, stream: stream.key.id, direction: .sending), name: stream.name,
                bytes: stream.sent, total: stream.size, resumedFrom: stream.resumedFrom, phase: .inProgress)
        }
        let receiving = incoming.values.filter { $0.kind == .resource }.map { stream in
            TransferProgress(
                id: TransferID(peer: stream.key.peer, stream: stream.key.id, direction: .receiving),
                name: stream.name, bytes: stream.written, total: stream.size, resumedFrom: stream.resumedFrom,
                phase: .inProgress)
        }
        return (sending + receiving).sorted { ($0.id.peer, $0.id.stream) < ($1.id.peer, $1.id.stream) }
    }

    private func grantIfDue(_ stream: IncomingStreamState, progress: UInt64, window: UInt64) {
        let limit = stream.kind == .resource ? min(progress + window, stream.size) : progress + window
        guard limit > stream.granted, limit - stream.granted >= window / 4 || limit == stream.size else { return }
        stream.granted = limit
        delegate?.sendSequenced(
            .streamCredit(StreamCredit(id: stream.key.id, received: stream.received, limit: limit)),
            to: stream.key.peer)
    }

    private func reportReceiving(_ stream: IncomingStreamState, phase: TransferProgress.Phase) {
        if case .inProgress = phase {
            let now = NIODeadline.now()
            guard now - stream.lastProgress >= Self.progressInterval else { return }
            stream.lastProgress = now
        }
        delegate?.emit(
            .transfer(
                TransferProgress(
                    id: TransferID(peer: stream.key.peer, stream: stream.key.id, direction: .receiving),
                    name: stream.name, bytes: stream.written, total: stream.size, resumedFrom: stream.resumedFrom,
                    phase: phase)))
    }

    // MARK: - Messages from peers

    /// A payload message from `peer` on its reliable channel: `streamOpen`, `streamChunk`, `streamCredit` or
    /// `streamEnd`.
    func received(_ message: Message, from peer: PeerID) {
        switch message {
        case .streamOpen(let open): receivedOpen(open, from: peer)
        case .streamChunk(let chunk): receivedChunk(chunk, from: peer)
        case .streamCredit(let credit): receivedCredit(credit, from: peer)
        case .streamEnd(let end): receivedEnd(end, from: peer)
        default: break
        }
    }

    private func receivedOpen(_ open: StreamOpen, from peer: PeerID) {
        let key = StreamKey(peer: peer, id: open.id)
        guard incoming[key] == nil else {
            logger.debug("\(name(of: peer)) reopened stream \(open.id); ignored")
            return
        }
        let stream = IncomingStreamState(key: key, kind: open.kind, name: open.name, size: open.size)
        guard open.kind == .resource else {
            guard acceptsByteStreams else {
                refuse(open.id, from: peer, .declined, "this peer takes no byte streams")
                return
            }
            incoming[key] = stream
            grantIfDue(stream, progress: 0, window: Self.streamWindow)
            delegate?.byteStreamOpened(from: peer, name: open.name, id: open.id)
            return
        }
        guard let inbox else {
            refuse(open.id, from: peer, .declined, "this peer takes no resources (it has no inbox)")
            return
        }
        guard let name = Inbox.safeFileName(open.name) else {
            refuse(open.id, from: peer, .declined, "the name \"\(open.name)\" is not a file name")
            return
        }
        incoming[key] = stream
        let size = open.size
        let bound = NIOLoopBound(self, eventLoop: loop)
        let boundStream = NIOLoopBound(stream, eventLoop: loop)
        logger.debug(
            "receiving \"\(name)\" (\(size) bytes) from \(self.name(of: peer))", metadata: ["peer": "\(peer)"])
        inbox.openPartial(from: peer, key: open.resumeKey, size: size, on: loop).whenComplete { result in
            let multiplexer = bound.value
            let stream = boundStream.value
            guard multiplexer.incoming[key] === stream else { return }  // cancelled meanwhile
            switch result {
            case .success(let file):
                stream.file = file
                stream.received = file.offset
                stream.written = file.offset
                stream.resumedFrom = file.offset
                multiplexer.reportReceiving(stream, phase: .started)
                multiplexer.grantIfDue(stream, progress: stream.written, window: Self.resourceWindow)
                if stream.granted == 0 && size == 0 {
                    // A resource of 0 bytes still needs a first credit to start.
                    multiplexer.delegate?.sendSequenced(
                        .streamCredit(StreamCredit(id: key.id, received: 0, limit: 0)), to: peer)
                }
            case .failure(let error):
                multiplexer.failIncoming(stream, "\(error)")
            }
        }
    }

    private func refuse(_ id: UInt32, from peer: PeerID, _ status: StreamStatus, _ reason: String) {
        logger.debug("refusing stream \(id) of \(name(of: peer)): \(reason)")
        end(id, to: peer, fromOpener: false, status, reason: reason)
    }

    private func receivedChunk(_ chunk: StreamChunk, from peer: PeerID) {
        let key = StreamKey(peer: peer, id: chunk.id)
        guard let stream = incoming[key] else { return }  // cancelled here; the opener learns it
        let end = stream.received + UInt64(chunk.bytes.count)
        guard stream.ready, chunk.offset == stream.received, end <= stream.granted,
            stream.kind != .resource || end <= stream.size
        else {
            failIncoming(
                stream,
                "chunk at \(chunk.offset)+\(chunk.bytes.count) breaks the stream (received \(stream.received), "
                    + "credit \(stream.granted))")
            return
        }
        stream.received = end
        if stream.kind == .resource {
            stream.pending.append(chunk.bytes)
            writePending(stream)
        } else if let reader = stream.reader {
            stream.reader = nil
            stream.consumed += UInt64(chunk.bytes.count)
            reader.succeed(chunk.bytes)
            grantIfDue(stream, progress: stream.consumed, window: Self.streamWindow)
        } else {
            stream.buffered.append(chunk.bytes)
        }
    }

    /// Writes a resource's waiting chunks, one write at a time, off the event loop.
    private func writePending(_ stream: IncomingStreamState) {
        guard !stream.writing, let file = stream.file, let inbox else { return }
        guard !stream.pending.isEmpty else {
            if stream.end != nil { finishIncoming(stream) }
            return
        }
        let chunks = stream.pending
        stream.pending = []
        stream.writing = true
        let bound = NIOLoopBound(self, eventLoop: loop)
        let boundStream = NIOLoopBound(stream, eventLoop: loop)
        inbox.write(chunks, to: file, on: loop).whenComplete { result in
            let multiplexer = bound.value
            let stream = boundStream.value
            stream.writing = false
            guard multiplexer.incoming[stream.key] === stream else { return }
            switch result {
            case .success(let offset):
                stream.written = offset
                multiplexer.reportReceiving(stream, phase: .inProgress)
                multiplexer.grantIfDue(stream, progress: offset, window: Self.resourceWindow)
                multiplexer.writePending(stream)
            case .failure(let error):
                multiplexer.failIncoming(stream, "\(error)")
            }
        }
    }

    /// Every byte of a resource is on disk and the opener sent its digest: verify, then move into place.
    private func finishIncoming(_ stream: IncomingStreamState) {
        guard let end = stream.end, let file = stream.file, let inbox else { return }
        guard stream.written == stream.size else {
            failIncoming(stream, "the opener finished at \(stream.written) of \(stream.size) bytes")
            return
        }
        let digest = file.digest
        guard digest == end.digest else {
            inbox.remove(file)
            failIncoming(
                stream, "SHA-256 mismatch: received \(digest.hexString), the sender's is \(end.digest.hexString)")
            return
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        let boundStream = NIOLoopBound(stream, eventLoop: loop)
        stream.writing = true
        inbox.commit(file, as: Inbox.safeFileName(stream.name) ?? "resource", on: loop).whenComplete { result in
            let multiplexer = bound.value
            let stream = boundStream.value
            stream.writing = false
            switch result {
            case .success(let destination):
                multiplexer.incoming[stream.key] = nil
                multiplexer.end(stream.key.id, to: stream.key.peer, fromOpener: false, .finished, digest: digest)
                multiplexer.logger.debug("received \"\(stream.name)\" into \(destination)")
                multiplexer.reportReceiving(stream, phase: .finished(path: destination, sha256: digest.hexString))
            case .failure(let error):
                multiplexer.failIncoming(stream, "\(error)")
            }
        }
    }

    /// Ends an incoming stream that cannot go on; the opener is told why. A partial file stays for a resume.
    private func failIncoming(_ stream: IncomingStreamState, _ reason: String) {
        incoming[stream.key] = nil
        logger.debug("stream \(stream.key.id) from \(stream.key.peer) failed: \(reason)")
        end(stream.key.id, to: stream.key.peer, fromOpener: false, .failed, reason: reason)
        stream.reader?.fail(SessionError(.transferFailed, reason))
        stream.reader = nil
        if stream.kind == .resource { reportReceiving(stream, phase: .failed(reason)) }
    }

    private func receivedCredit(_ credit: StreamCredit, from peer: PeerID) {
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

    private func receivedEnd(_ end: StreamEnd, from peer: PeerID) {
        let key = StreamKey(peer: peer, id: end.id)
        if end.fromOpener {
            guard let stream = incoming[key] else { return }
            stream.end = end
            if end.status != .finished {
                // What was not read yet is dropped; the reader's next read (or the one waiting) fails with the reason.
                stream.buffered = []
                stream.bufferedHead = 0
                if stream.kind == .resource || stream.reader != nil { incoming[key] = nil }
                stream.reader?.fail(SessionError(.cancelled, "the opener ended the stream: \(end.describe)"))
                stream.reader = nil
                if stream.kind == .resource {
                    if let file = stream.file { inbox?.remove(file) }
                    reportReceiving(stream, phase: .cancelled(byPeer: true, reason: end.reason))
                }
            } else if stream.kind == .resource {
                writePending(stream)
            } else if stream.isBufferEmpty, let reader = stream.reader {
                incoming[key] = nil
                stream.reader = nil
                reader.succeed(nil)
            }
            return
        }
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

    /// Every stream with `peer` ends: it restarted or left, and what it held died with it. Partial files stay; data
    /// waiting for room fails.
    func peerGone(_ peer: PeerID, reason: String) {
        for (key, stream) in outgoing where key.peer == peer {
            outgoing[key] = nil
            fail(stream, SessionError(.transferFailed, reason))
            if stream.kind == .resource { reportSending(stream, phase: .failed(reason)) }
        }
        for (key, stream) in incoming where key.peer == peer {
            incoming[key] = nil
            stream.reader?.fail(SessionError(.transferFailed, reason))
            stream.reader = nil
            if stream.kind == .resource { reportReceiving(stream, phase: .failed(reason)) }
        }
        for pending in outboxes.removeValue(forKey: peer) ?? [] {
            pending.promise.fail(SessionError(.transferFailed, reason))
        }
    }
}

extension StreamEnd {
    var describe: String {
        reason.isEmpty ? "\(status)" : "\(status): \(reason)"
    }
}

extension Message {
    /// The payload's size, for flow control.
    var approximateSize: Int {
        switch self {
        case .data(let bytes): bytes.count + 8
        case .appMessage(let message): message.bytes.count + 9
        case .streamChunk(let chunk): chunk.bytes.count + 16
        default: 64
        }
    }
}
