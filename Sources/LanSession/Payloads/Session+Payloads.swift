import Crypto
import NIOCore
import NIOPosix
import WireCodec

/// How ``Session/send(_:to:mode:)-(ByteBuffer,_,_)`` delivers a message.
public enum SendMode: String, Hashable, Sendable, CaseIterable {
    /// Exactly once and in order per peer, across reconnects and path switches.
    case reliable
    /// As a datagram where they get through (on the reliable link where they do not): may be lost, never doubled by
    /// the sender. At most `Wire.maxUnreliableDataLength` bytes.
    case unreliable
    /// As `reliable`, and on the disk before the send returns (``SessionConfiguration/durableDirectory``), kept
    /// until the receiver acknowledged it: a crash of the sender loses nothing sent, and its next start sends it
    /// again; the receiver takes each once, in order (docs/wire-format.md, section 10.5).
    case durable
}

extension Session {
    /// Largest message ``send(_:to:mode:)-(ByteBuffer,_,_)`` takes reliably, in bytes; use a stream or a resource
    /// for more.
    public static let maxMessageSize = Wire.maxDataLength
    /// Largest message ``send(_:to:mode:)-(ByteBuffer,_,_)`` takes unreliably, in bytes.
    public static let maxUnreliableMessageSize = Wire.maxUnreliableDataLength
    /// How far the writer of a byte stream may run ahead of its reader, in bytes.
    public static let streamWindow = Int(StreamMultiplexer.streamWindow)

    /// Sends an application's message to `peers` (every member when nil); the receivers get it in
    /// ``SessionEvent/messages(_:)`` (or ``SessionEvent/data(from:bytes:reliable:)``, one event per message).
    ///
    /// Reliable messages are numbered and kept until acknowledged, so each arrives exactly once and in order, also
    /// across reconnects and path switches; when a peer's channel is full (it is away, or slow), this waits for room
    /// rather than dropping anything. Returns once the message is on every peer's channel.
    ///
    /// `message` is kept (not copied) until every peer acknowledged it: a small one is copied once, into the link's
    /// write, a large one not at all. Called on the session's event loop, it costs no hop; from elsewhere, one. Many messages at once go with one hop with
    /// ``send(contentsOf:to:mode:)``.
    ///
    /// - Throws: ``SessionError/Code/messageTooLarge`` above ``maxMessageSize`` (``maxUnreliableMessageSize``
    ///   unreliably); ``SessionError/Code/noSuchPeer`` for a peer that is not a member, listing the members.
    public func send(
        _ message: ByteBuffer, to peers: [PeerID]? = nil, mode: SendMode = .reliable
    ) async throws(SessionError) {
        try await send(contentsOf: [message], to: peers, mode: mode)
    }

    /// Sends `messages` to `peers` (every member when nil), in order, with one hop to the session's loop for all of
    /// them: the way to send many small messages (game state, sensor readings, chat history). Each is a message of its
    /// own, as with ``send(_:to:mode:)-(ByteBuffer,_,_)``; they arrive in order, and a receiver that reads batches gets
    /// those that came in one read together. Checks every message's size before it sends any.
    public func send(
        contentsOf messages: [ByteBuffer], to peers: [PeerID]? = nil, mode: SendMode = .reliable
    ) async throws(SessionError) {
        guard !messages.isEmpty else { return }
        if mode == .durable {
            let written = try await callComponents { components throws(SessionError) in
                try components.sender.sendDurable(messages, to: peers)
            }
            do {
                return try await written.get()
            } catch {
                throw SessionError(error)
            }
        }
        // Done at once unless a peer's replay buffer is short of room: then it waits for acknowledgements.
        let waiting = try await callComponents { components throws(SessionError) in
            try components.sender.sendData(messages, to: peers, reliable: mode == .reliable)
        }
        guard let waiting else { return }
        do {
            try await waiting.get()
        } catch {
            throw SessionError(error)
        }
    }

    /// Sends `bytes` as one message: ``send(_:to:mode:)-(ByteBuffer,_,_)`` for an array.
    public func send(_ bytes: [UInt8], to peers: [PeerID]? = nil, mode: SendMode = .reliable) async throws(SessionError)
    {
        try await send(ByteBuffer(bytes: bytes), to: peers, mode: mode)
    }

    /// Opens a named byte stream to `peer`; it gets ``SessionEvent/streamOpened(_:)`` and reads the bytes as an
    /// `AsyncSequence`. Returns once the receiver took the stream.
    public func openStream(named name: String, to peer: PeerID) async throws(SessionError) -> OutgoingByteStream {
        let (id, _) = try await runComponents {
            $0.sender.openStream(to: peer, kind: .bytes, name: name, size: 0, resumeKey: [])
        }
        return OutgoingByteStream(peer: peer, name: name, id: id, session: self)
    }

    /// Sends the file at `path` to `peer` as a resource named `name` (the file's name by default), and returns
    /// once the receiver has every byte, checked against the SHA-256 of the file, on its disk under its inbox.
    ///
    /// Progress arrives on both sides as ``SessionEvent/transfer(_:)``, and here to `progress` too (called on the
    /// session's event loop: keep it short). A link cut is repaired by the reliable
    /// channel; when the receiver already holds part of the same resource (an interrupted attempt, keyed by name,
    /// size and modification time), only the rest is sent. Cancel the calling task, or call
    /// ``cancelTransfer(_:reason:)`` on either side, to stop it.
    ///
    /// - Returns: The final progress value (phase `.finished`, with the SHA-256).
    @discardableResult
    public func sendResource(
        at path: String, named name: String? = nil, to peer: PeerID,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(SessionError) -> TransferProgress {
        let (file, metadata) = try await offload { () throws(SessionError) in try ResourceFile.openForReading(path) }
        let name = name ?? String(path.split(separator: "/").last ?? "resource")
        guard Inbox.safeFileName(name) == name else {
            throw SessionError(.invalidArgument, "\"\(name)\" is not a file name")
        }
        var key = SHA256()
        key.update(data: Array("\(name)\u{0}\(metadata.size)\u{0}\(metadata.modified)\u{0}\(metadata.inode)".utf8))
        let resumeKey = Array(key.finalize().prefix(Wire.resumeKeyLength))
        let (id, from) = try await runComponents {
            $0.sender.openStream(
                to: peer, kind: .resource, name: name, size: metadata.size, resumeKey: resumeKey, onProgress: progress)
        }
        let streamKey = StreamKey(peer: peer, id: id)
        let transfer = TransferID(peer: peer, stream: id, direction: .sending)
        let sending = { [self] () async throws(SessionError) -> TransferProgress in
            do throws(SessionError) {
                try await offload { () throws(SessionError) in try file.skip(from) }
                // Reading (and hashing) the next block overlaps with sending the current one. A block comes in pieces
                // of one chunk each, which go on the wire without another copy.
                let blockSize = 1 << 20
                let pieceSize = StreamMultiplexer.chunkSize
                var remaining = metadata.size - from
                let first = Int(min(remaining, UInt64(blockSize)))
                var block = try await offload { () throws(SessionError) in
                    try file.read(upTo: first, pieceSize: pieceSize)
                }
                while remaining > 0 {
                    let count = block.reduce(0) { $0 + $1.count }
                    guard count > 0 else { throw SessionError(.io, "\(path) became shorter while being sent") }
                    remaining -= UInt64(count)
                    let wanted = Int(min(remaining, UInt64(blockSize)))
                    async let next = offload { () throws(SessionError) in
                        wanted > 0 ? try file.read(upTo: wanted, pieceSize: pieceSize) : []
                    }
                    let current = block
                    try await runComponents { $0.streams.write(streamKey, current) }
                    do {
                        block = try await next
                    } catch {
                        throw SessionError(error)
                    }
                }
                let digest = file.digest
                try await runComponents { $0.streams.finish(streamKey, digest: digest) }
                return TransferProgress(
                    id: transfer, name: name, bytes: metadata.size, total: metadata.size, resumedFrom: from,
                    phase: .finished(path: nil, sha256: digest.hexString))
            } catch {
                scheduleComponents { $0.streams.cancelOutgoing(streamKey, reason: "\(error)") }
                throw error
            }
        }
        do {
            return try await withTaskCancellationHandler {
                try await sending()
            } onCancel: {
                scheduleComponents { $0.streams.cancelOutgoing(streamKey, reason: "cancelled by the sender") }
            }
        } catch {
            throw SessionError(error)
        }
    }

    /// Whether byte streams peers open are taken from now on (as ``SessionEvent/streamOpened(_:)``) or declined with
    /// `streamEnd(declined)`; ``SessionConfiguration/acceptsByteStreams`` says at the start. Streams taken stay taken.
    public func acceptByteStreams(_ accept: Bool) async throws(SessionError) {
        try await callComponents { $0.streams.acceptsByteStreams = accept }
    }

    /// Resource transfers under way, in both directions.
    public func transfers() async throws(SessionError) -> [TransferProgress] {
        try await callComponents { $0.streams.transfers }
    }

    /// Cancels a transfer of either direction; the other side is told with `reason`.
    ///
    /// - Throws: ``SessionError/Code/noSuchTransfer`` when none of that id is under way.
    public func cancelTransfer(_ id: TransferID, reason: String = "cancelled") async throws(SessionError) {
        try await callComponents { components throws(SessionError) in
            try components.streams.cancelTransfer(id, reason: reason)
        }
    }
}

extension Session {
    /// Where `peer` stands now.
    public func connectionState(of peer: PeerID) async throws(SessionError) -> PeerConnectionState {
        try await callComponents { components throws(SessionError) in try components.peers.connectionState(of: peer) }
    }

    /// The states `peer` goes through from now on (``SessionEvent/peerChanged(_:_:)`` for that peer only), for one
    /// reader, buffered as ``subscribe(bufferSize:data:)``.
    public func connectionStates(
        of peer: PeerID
    ) -> AsyncCompactMapSequence<AsyncStream<SessionEvent>, PeerConnectionState> {
        subscribe().compactMap { event in
            if case .peerChanged(let id, let state) = event, id == peer { state } else { nil }
        }
    }

    /// Disconnects `peer`: says bye on its links, stops redialling it and ends every stream and transfer with it
    /// (`MCSession.disconnect()` for one peer). It comes back when it shows up anew or is connected to again.
    public func disconnect(_ peer: PeerID) async throws(SessionError) {
        try await call { core throws(SessionError) in try core.disconnect(peer) }
    }
}

extension Session {
    /// Invites `peer` into the session with `context` for its decision (`MCNearbyServiceBrowser.invitePeer`), and
    /// returns once it accepted. For sessions that choose whom to invite
    /// (``SessionConfiguration/invitesDiscoveredPeers`` false); with automatic invitations it dials at once.
    ///
    /// - Throws: ``SessionError/Code/declined`` with the peer's reason, ``SessionError/Code/timedOut`` when it
    ///   did not accept within `timeout`, ``SessionError/Code/noSuchPeer`` for a peer not discovered yet.
    public func invite(
        _ peer: PeerID, context: [UInt8] = [], timeout: Duration = .seconds(30)
    ) async throws(SessionError) {
        try await run { $0.invite(peer, context: context, timeout: timeout) }
    }
}
