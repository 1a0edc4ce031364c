import WireCodec

/// Names one transfer of a session: a stream or a resource, to or from a peer.
public struct TransferID: Hashable, Sendable, CustomStringConvertible {
    /// The other side.
    public var peer: PeerID
    /// The stream's number, as chosen by its opener.
    public var stream: UInt32
    /// Whether this peer sends (opened it) or receives.
    public var direction: TransferProgress.Direction

    /// Creates a transfer id.
    public init(peer: PeerID, stream: UInt32, direction: TransferProgress.Direction) {
        self.peer = peer
        self.stream = stream
        self.direction = direction
    }

    /// `out:PEER/N` or `in:PEER/N`.
    public var description: String { "\(direction == .sending ? "out" : "in"):\(peer)/\(stream)" }
}

/// Where a resource transfer (a file) stands, on either side; see ``SessionEvent/transfer(_:)``.
public struct TransferProgress: Hashable, Sendable, CustomStringConvertible {
    /// Which side this peer is on.
    public enum Direction: String, Hashable, Sendable {
        /// This peer sends the resource.
        case sending
        /// This peer receives it.
        case receiving
    }

    /// What happened.
    public enum Phase: Hashable, Sendable {
        /// The receiver took the resource; bytes flow from ``TransferProgress/resumedFrom``.
        case started
        /// More bytes went through.
        case inProgress
        /// Every byte arrived and its SHA-256 matched; on the receiver, the file is at `path`.
        case finished(path: String?, sha256: String)
        /// Cancelled by `byPeer` (the other side) or by this one.
        case cancelled(byPeer: Bool, reason: String)
        /// It failed: a disk error, a digest that did not match, a peer that restarted, a refusal.
        case failed(String)

        /// Whether the transfer is over.
        public var isFinal: Bool {
            switch self {
            case .started, .inProgress: false
            case .finished, .cancelled, .failed: true
            }
        }
    }

    /// The transfer.
    public var id: TransferID
    /// The resource's name (a file name).
    public var name: String
    /// Bytes the receiver holds (sending: bytes sent and kept for resending until acknowledged).
    public var bytes: UInt64
    /// The resource's size.
    public var total: UInt64
    /// Where this attempt started: bytes the receiver already held from an interrupted one.
    public var resumedFrom: UInt64
    /// What happened.
    public var phase: Phase

    /// Creates a progress value.
    public init(id: TransferID, name: String, bytes: UInt64, total: UInt64, resumedFrom: UInt64, phase: Phase) {
        self.id = id
        self.name = name
        self.bytes = bytes
        self.total = total
        self.resumedFrom = resumedFrom
        self.phase = phase
    }

    /// The other side.
    public var peer: PeerID { id.peer }

    /// Between 0 and 1.
    public var fractionCompleted: Double { total == 0 ? 1 : Double(bytes) / Double(total) }

    public var description: String {
        let arrow = id.direction == .sending ? "to" : "from"
        let head = "\(name) \(arrow) \(id.peer): \(bytes)/\(total) bytes"
        switch phase {
        case .started: return "\(head), started" + (resumedFrom > 0 ? " (resumed at \(resumedFrom))" : "")
        case .inProgress: return "\(head) (\(Int(fractionCompleted * 100))%)"
        case .finished(let path, let sha256):
            return "\(head), verified sha256 \(sha256)" + (path.map { " → \($0)" } ?? "")
        case .cancelled(let byPeer, let reason): return "\(head), cancelled by \(byPeer ? "the peer" : "us"): \(reason)"
        case .failed(let reason): return "\(head), failed: \(reason)"
        }
    }
}
