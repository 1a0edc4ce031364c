import WireCodec

/// A byte stream a peer opened to this one; see ``SessionEvent/streamOpened(_:)``.
///
/// Iterate it once, from one task: each element is a chunk of bytes in order, and the sequence ends when the opener
/// finishes the stream. Reading is the flow control: the opener may send at most ``Session/streamWindow`` bytes
/// beyond what was read, so a slow reader slows the writer and memory stays bounded. Iteration throws when the opener
/// cancels, when the stream fails (the opener restarted or left), and when this side cancels.
public final class IncomingByteStream: AsyncSequence, Hashable, Sendable, CustomStringConvertible {
    public typealias Element = [UInt8]

    /// The opener.
    public let peer: PeerID
    /// The opener's name for the stream.
    public let name: String
    /// The stream's number, chosen by the opener.
    public let id: UInt32
    let session: Session

    init(peer: PeerID, name: String, id: UInt32, session: Session) {
        self.peer = peer
        self.name = name
        self.id = id
        self.session = session
    }

    /// Reads the stream, chunk by chunk.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: IncomingByteStream

        /// The next chunk, or nil once the opener finished and every byte was read.
        public mutating func next() async throws -> [UInt8]? {
            try await stream.read()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }

    /// The next chunk, or nil at the end.
    public func read() async throws(SessionError) -> [UInt8]? {
        let key = StreamKey(peer: peer, id: id)
        return try await session.runComponents { $0.streams.read(key) }
    }

    /// Stops reading: the opener's writes fail with the reason.
    public func cancel(reason: String = "cancelled by the reader") async {
        let key = StreamKey(peer: peer, id: id)
        _ = try? await session.callComponents { $0.streams.cancelIncoming(key, reason: reason) }
    }

    public static func == (lhs: IncomingByteStream, rhs: IncomingByteStream) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "stream \(id) \"\(name)\" from \(peer)" }
}

/// A byte stream this peer opened to another; see ``Session/openStream(named:to:)``.
///
/// ``write(_:)`` returns once the receiver has room for the bytes (its reader keeps up) and they are on the reliable
/// channel: exactly once and in order, across reconnects and path switches. Write from one task at a time.
public final class OutgoingByteStream: Sendable, CustomStringConvertible {
    /// The receiver.
    public let peer: PeerID
    /// The stream's name.
    public let name: String
    /// The stream's number.
    public let id: UInt32
    let session: Session

    init(peer: PeerID, name: String, id: UInt32, session: Session) {
        self.peer = peer
        self.name = name
        self.id = id
        self.session = session
    }

    /// Sends `bytes` (any length), waiting while the receiver has no room for them.
    public func write(_ bytes: [UInt8]) async throws(SessionError) {
        guard !bytes.isEmpty else { return }
        let key = StreamKey(peer: peer, id: id)
        try await session.runComponents { $0.streams.write(key, [bytes]) }
    }

    /// Ends the stream: the reader's sequence ends after the last byte.
    public func finish() async throws(SessionError) {
        let key = StreamKey(peer: peer, id: id)
        try await session.runComponents { $0.streams.finish(key, digest: []) }
    }

    /// Cancels the stream: the reader's iteration throws with the reason.
    public func cancel(reason: String = "cancelled by the writer") async {
        let key = StreamKey(peer: peer, id: id)
        _ = try? await session.callComponents { $0.streams.cancelOutgoing(key, reason: reason) }
    }

    public var description: String { "stream \(id) \"\(name)\" to \(peer)" }
}

/// One stream of a session: the other side and the opener's number.
struct StreamKey: Hashable, Sendable {
    var peer: PeerID
    var id: UInt32
}
