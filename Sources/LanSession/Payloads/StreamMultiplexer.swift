import Logging
import NIOCore
import WireCodec

/// What the stream multiplexer needs from the session.
protocol StreamMultiplexerDelegate: AnyObject {
    /// Sends a sequenced message to `peer`, a member: numbered, kept for resending, written when its link carries data.
    func sendSequenced(_ message: Message, to peer: PeerID)
    /// Sends a sequenced message to `peer` if its reliable channel keeps room for `bytes` more in `messages` more
    /// frames beside it; false, and nothing sent, otherwise.
    func sendSequenced(_ message: Message, to peer: PeerID, ifRoomBeyond bytes: Int, messages: Int) -> Bool
    /// Sends an application's `data` payload to `peer` if its reliable channel keeps room for `bytes` more in
    /// `messages` more frames beside it; false, and nothing sent, otherwise.
    func sendData(_ payload: ByteBuffer, to peer: PeerID, ifRoomBeyond bytes: Int, messages: Int) -> Bool
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
/// The opener's side is ``OutgoingStreams``, the receiver's ``IncomingStreams``; this routes between them.
final class StreamMultiplexer {
    /// Bytes a byte stream's reader may fall behind by: the opener's credit beyond what was read.
    static let streamWindow: UInt64 = 256 << 10
    /// Bytes a resource's receiver takes beyond what is on its disk.
    static let resourceWindow: UInt64 = 2 << 20
    /// Unacknowledged bytes on a peer's reliable channel above which stream chunks wait: about two chunks, well
    /// over a LAN's bandwidth × round trip, and what a small message may have to wait behind at the receiver (a
    /// ping during a sealed push on this kind of machine: p50 about 110 µs with 64 KiB, 230–300 µs with 192 KiB).
    static let bulkLimit = 64 << 10
    /// Payload bytes of `data` and `streamChunk` received after which the receiver acknowledges at once.
    static let ackAfterBytes = 48 << 10
    /// Bytes per `streamChunk`.
    static let chunkSize = 60 << 10
    /// Room kept on the reliable channel for the session's own messages: applications' data waits beyond it.
    static let reservedReplayBytes = 256 << 10
    static let reservedReplayMessages = 1024
    /// Least time between two progress events of one transfer.
    static let progressInterval = TimeAmount.milliseconds(100)

    weak var delegate: (any StreamMultiplexerDelegate)? {
        didSet {
            outgoing.delegate = delegate
            incoming.delegate = delegate
        }
    }
    private let outgoing: OutgoingStreams
    private let incoming: IncomingStreams

    /// The entries of its tables, by name (``Session/tableSizes()``).
    var tableSizes: [String: Int] { outgoing.tableSizes.merging(incoming.tableSizes) { $1 } }

    init(loop: any EventLoop, logger: Logger, inbox: Inbox?, acceptsByteStreams: Bool) {
        outgoing = OutgoingStreams(loop: loop, logger: logger)
        incoming = IncomingStreams(
            loop: loop, logger: logger, inbox: inbox, acceptsByteStreams: acceptsByteStreams)
    }

    /// Whether byte streams opened by peers are taken (as ``SessionEvent/streamOpened(_:)``) or declined.
    var acceptsByteStreams: Bool {
        get { incoming.acceptsByteStreams }
        set { incoming.accept(byteStreams: newValue) }
    }

    // MARK: - Opener

    /// Sends an application's reliable `data` messages to `peer` (a member), in order: at once while its reliable
    /// channel has room and nothing waits for it, otherwise after what waits. Returns nil when they are on the channel
    /// already, otherwise the future of the last one's turn (it succeeds as acknowledgements free room).
    func sendData(_ payloads: [ByteBuffer], to peer: PeerID) -> EventLoopFuture<Void>? {
        outgoing.sendData(payloads, to: peer)
    }

    /// Whether data for `peer` waits for room on its reliable channel.
    func hasWaitingData(for peer: PeerID) -> Bool {
        outgoing.hasWaitingData(for: peer)
    }

    /// Acknowledgements or a resume freed room on `peer`'s reliable channel: waiting data goes first, then chunks.
    func roomFreed(for peer: PeerID) {
        outgoing.roomFreed(for: peer)
    }

    /// Opens a stream to `peer`, a member; succeeds with the stream's number and where the receiver wants the bytes to
    /// start, once it granted its first credit.
    func open(
        to peer: PeerID, kind: StreamKind, name: String, size: UInt64, resumeKey: [UInt8],
        onProgress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> EventLoopFuture<(UInt32, UInt64)> {
        outgoing.open(to: peer, kind: kind, name: name, size: size, resumeKey: resumeKey, onProgress: onProgress)
    }

    /// Queues `pieces` on an open stream; succeeds once every byte is on the reliable channel.
    func write(_ key: StreamKey, _ pieces: [[UInt8]]) -> EventLoopFuture<Void> {
        outgoing.write(key, pieces)
    }

    /// Ends an open stream: for a resource, with its digest, and succeeds once the receiver verified it.
    func finish(_ key: StreamKey, digest: [UInt8]) -> EventLoopFuture<Void> {
        outgoing.finish(key, digest: digest)
    }

    /// Cancels a stream this peer opened; the receiver is told, and a waiting write fails.
    func cancelOutgoing(_ key: StreamKey, reason: String) {
        outgoing.cancelOutgoing(key, reason: reason)
    }

    // MARK: - Receiver

    /// The next chunk of a byte stream from a peer, waiting for one; nil at its end.
    func read(_ key: StreamKey) -> EventLoopFuture<[UInt8]?> {
        incoming.read(key)
    }

    /// Cancels a stream or a transfer from its receiver's side: the opener is told; a partial file is removed.
    func cancelIncoming(_ key: StreamKey, reason: String) {
        incoming.cancelIncoming(key, reason: reason)
    }

    // MARK: - Both sides

    /// Cancels a transfer of either direction by its id.
    func cancelTransfer(_ id: TransferID, reason: String) throws(SessionError) {
        let key = StreamKey(peer: id.peer, id: id.stream)
        switch id.direction {
        case .sending:
            guard outgoing.has(key) else { throw SessionError(.noSuchTransfer, "no transfer \(id) under way") }
            outgoing.cancelOutgoing(key, reason: reason)
        case .receiving:
            guard incoming.has(key) else { throw SessionError(.noSuchTransfer, "no transfer \(id) under way") }
            incoming.cancelIncoming(key, reason: reason)
        }
    }

    /// Every transfer of a resource under way, both directions.
    var transfers: [TransferProgress] {
        (outgoing.transfers + incoming.transfers).sorted {
            ($0.id.peer, $0.id.stream) < ($1.id.peer, $1.id.stream)
        }
    }

    /// A payload message from `peer` on its reliable channel: `streamOpen`, `streamChunk`, `streamCredit` or
    /// `streamEnd`, to the side it is for.
    func received(_ message: Message, from peer: PeerID) {
        switch message {
        case .streamOpen(let open): incoming.receivedOpen(open, from: peer)
        case .streamChunk(let chunk): incoming.receivedChunk(chunk, from: peer)
        case .streamCredit(let credit): outgoing.receivedCredit(credit, from: peer)
        case .streamEnd(let end) where end.fromOpener: incoming.receivedEnd(end, from: peer)
        case .streamEnd(let end): outgoing.receivedEnd(end, from: peer)
        default: break
        }
    }

    /// What waits for `peer`, a member away too long, fails with `reason` (``SessionError/Code/timedOut``): data
    /// waiting for room, and streams both ways; the peer is told of each stream's end when it is back. Partial files
    /// stay, to be resumed.
    func peerAway(_ peer: PeerID, reason: String) {
        outgoing.peerAway(peer, reason: reason)
        incoming.peerAway(peer, reason: reason)
    }

    /// Every stream with `peer` ends: it restarted or left, and what it held died with it. Partial files stay; data
    /// waiting for room fails.
    func peerGone(_ peer: PeerID, reason: String) {
        outgoing.peerGone(peer, reason: reason)
        incoming.peerGone(peer, reason: reason)
    }
}

extension StreamMultiplexerDelegate {
    /// Sends `streamEnd` for stream `id` to `peer`, the reason cut to its limit at a character boundary.
    func sendStreamEnd(
        _ id: UInt32, to peer: PeerID, fromOpener: Bool, _ status: StreamStatus, digest: [UInt8] = [],
        reason: String = ""
    ) {
        var cut = reason
        while cut.utf8.count > Wire.maxStreamReasonLength { cut.removeLast() }
        sendSequenced(
            .streamEnd(StreamEnd(id: id, fromOpener: fromOpener, status: status, digest: digest, reason: cut)),
            to: peer)
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
