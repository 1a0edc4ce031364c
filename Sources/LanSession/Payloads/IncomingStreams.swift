import Logging
import NIOCore
import WireCodec

/// The receiver's side of payloads: the streams peers opened to this one, read by the application (byte streams) or
/// written into the ``Inbox`` off the loop (resources), with the credit that paces their openers. Part of the
/// ``StreamMultiplexer``.
final class IncomingStreams {
    weak var delegate: (any StreamMultiplexerDelegate)?
    private let loop: any EventLoop
    private let logger: Logger
    /// Where resources land; nil: they are declined.
    private let inbox: Inbox?
    /// Whether byte streams opened by peers are taken (``accept(byteStreams:)``).
    private(set) var acceptsByteStreams: Bool

    private var incoming: [StreamKey: IncomingStreamState] = [:]

    /// The entries of its tables, by name (``Session/tableSizes()``).
    var tableSizes: [String: Int] { ["streamsIncoming": incoming.count] }

    init(loop: any EventLoop, logger: Logger, inbox: Inbox?, acceptsByteStreams: Bool) {
        self.loop = loop
        self.logger = logger
        self.inbox = inbox
        self.acceptsByteStreams = acceptsByteStreams
    }

    /// Takes byte streams opened by peers from now on, or declines them.
    func accept(byteStreams: Bool) {
        acceptsByteStreams = byteStreams
    }

    private func name(of peer: PeerID) -> String { delegate?.name(of: peer) ?? "" }

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
            grantIfDue(stream, progress: stream.consumed, window: StreamMultiplexer.streamWindow)
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
        delegate?.sendStreamEnd(key.id, to: key.peer, fromOpener: false, .cancelled, reason: reason)
        stream.reader?.fail(SessionError(.cancelled, "cancelled: \(reason)"))
        stream.reader = nil
        if stream.kind == .resource {
            if let file = stream.file { inbox?.remove(file) }
            reportReceiving(stream, phase: .cancelled(byPeer: false, reason: reason))
        }
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
            guard now - stream.lastProgress >= StreamMultiplexer.progressInterval else { return }
            stream.lastProgress = now
        }
        delegate?.emit(
            .transfer(
                TransferProgress(
                    id: TransferID(peer: stream.key.peer, stream: stream.key.id, direction: .receiving),
                    name: stream.name, bytes: stream.written, total: stream.size, resumedFrom: stream.resumedFrom,
                    phase: phase)))
    }

    // MARK: - What the opener says

    /// The opener opened a stream: a byte stream the application reads, or a resource into the inbox.
    func receivedOpen(_ open: StreamOpen, from peer: PeerID) {
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
            grantIfDue(stream, progress: 0, window: StreamMultiplexer.streamWindow)
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
                multiplexer.grantIfDue(stream, progress: stream.written, window: StreamMultiplexer.resourceWindow)
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
        delegate?.sendStreamEnd(id, to: peer, fromOpener: false, status, reason: reason)
    }

    /// The next bytes of a stream.
    func receivedChunk(_ chunk: StreamChunk, from peer: PeerID) {
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
            grantIfDue(stream, progress: stream.consumed, window: StreamMultiplexer.streamWindow)
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
                multiplexer.grantIfDue(stream, progress: offset, window: StreamMultiplexer.resourceWindow)
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
                multiplexer.delegate?.sendStreamEnd(
                    stream.key.id, to: stream.key.peer, fromOpener: false, .finished, digest: digest)
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
        delegate?.sendStreamEnd(stream.key.id, to: stream.key.peer, fromOpener: false, .failed, reason: reason)
        stream.reader?.fail(SessionError(.transferFailed, reason))
        stream.reader = nil
        if stream.kind == .resource { reportReceiving(stream, phase: .failed(reason)) }
    }

    /// The opener ended stream `end.id`: finished (a resource is then verified and moved into place), cancelled.
    func receivedEnd(_ end: StreamEnd, from peer: PeerID) {
        let key = StreamKey(peer: peer, id: end.id)
        guard let stream = incoming[key] else { return }
        stream.end = end
        if end.status != .finished {
            // What was not read yet is dropped; the reader's next read (or the one waiting) fails with the reason.
            stream.buffered = []
            stream.bufferedHead = 0
            if stream.kind == .resource || stream.reader != nil { incoming[key] = nil }
            // Cancelled: the partial file goes. Failed (the opener gave up, say on a peer away too long): it stays, to
            // be resumed when the opener sends the resource again.
            let cancelled = end.status != .failed
            stream.reader?.fail(
                SessionError(cancelled ? .cancelled : .transferFailed, "the opener ended the stream: \(end.describe)"))
            stream.reader = nil
            if stream.kind == .resource {
                if cancelled, let file = stream.file { inbox?.remove(file) }
                reportReceiving(
                    stream, phase: cancelled ? .cancelled(byPeer: true, reason: end.reason) : .failed(end.describe))
            }
        } else if stream.kind == .resource {
            writePending(stream)
        } else if stream.isBufferEmpty, let reader = stream.reader {
            incoming[key] = nil
            stream.reader = nil
            reader.succeed(nil)
        }
    }

    /// Every stream from `peer` fails (it restarted or left); partial files stay for a resume.
    func peerGone(_ peer: PeerID, reason: String) {
        for (key, stream) in incoming where key.peer == peer {
            incoming[key] = nil
            stream.reader?.fail(SessionError(.transferFailed, reason))
            stream.reader = nil
            if stream.kind == .resource { reportReceiving(stream, phase: .failed(reason)) }
        }
    }

    /// The streams from `peer` (away too long) fail; the opener is told when it is back. A partial file stays, to be
    /// resumed when the opener sends the resource again.
    func peerAway(_ peer: PeerID, reason: String) {
        for (key, stream) in incoming where key.peer == peer {
            incoming[key] = nil
            delegate?.sendStreamEnd(key.id, to: peer, fromOpener: false, .failed, reason: reason)
            stream.reader?.fail(SessionError(.timedOut, reason))
            stream.reader = nil
            if stream.kind == .resource { reportReceiving(stream, phase: .failed(reason)) }
        }
    }

    /// Whether a stream of this key is under way.
    func has(_ key: StreamKey) -> Bool { incoming[key] != nil }

    /// The resources under way.
    var transfers: [TransferProgress] {
        incoming.values.filter { $0.kind == .resource }.map { stream in
            TransferProgress(
                id: TransferID(peer: stream.key.peer, stream: stream.key.id, direction: .receiving),
                name: stream.name, bytes: stream.written, total: stream.size, resumedFrom: stream.resumedFrom,
                phase: .inProgress)
        }
    }
}
