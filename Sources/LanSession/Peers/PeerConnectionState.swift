import WireCodec

/// Where a peer stands for an application, one state at a time (as MultipeerConnectivity's
/// `MCSessionState`, with the reason when it is not connected); see ``SessionEvent/peerChanged(_:_:)``.
public enum PeerConnectionState: Hashable, Sendable, CustomStringConvertible {
    /// A link is being set up: dialled, in its handshake, or waiting for an answer to the invitation.
    case connecting
    /// Messages flow both ways.
    case connected
    /// No link carries messages.
    case notConnected(Reason)

    /// Why a peer is not connected.
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// Known (discovered, or configured) but never connected.
        case notYetConnected
        /// Its links broke or went silent; it is redialled while it has an endpoint, and whatever was sent to it
        /// reliably waits for it.
        case lost
        /// It left on purpose (it said bye).
        case left(ByeReason)
        /// It, or this side, refused the link.
        case declined(DeclineReason)
        /// This side disconnected it (``Session/disconnect(_:)``).
        case disconnected

        public var description: String {
            switch self {
            case .notYetConnected: "not yet connected"
            case .lost: "lost"
            case .left(let reason): "left (\(reason))"
            case .declined(let reason): "declined (\(reason))"
            case .disconnected: "disconnected"
            }
        }
    }

    public var description: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .notConnected(let reason): "not connected: \(reason)"
        }
    }
}
