import LanSession
import NIOCore
import WireCodec

/// An application for tests: it takes the kinds and numbers it is given, records every message and every call the
/// session makes, and calls `onMessage` from within the session's handling of each message.
public final class MessageRecorder: SessionApplication {
    /// A call the session made.
    public enum Call: Hashable, Sendable {
        case received(Message, from: PeerID, reliably: Bool)
        case peerConnected(PeerID)
        case membershipChanged
        case peerRestarted(PeerID)
        case peerMissedMessages(PeerID)
        case sessionStopped
    }

    public let applicationKinds: Set<UInt8>
    public let appNumbers: Set<UInt8>
    /// Every call so far, in order (ticks aside).
    public private(set) var calls: [Call] = []
    /// Called with each message as it is received.
    public var onMessage: (Message) -> Void = { _ in }
    /// Reads each message before it is recorded, as an application reads the body of its kinds: what it throws goes
    /// back to the session, as a malformed message's error does.
    public var check: (Message) throws(WireError) -> Void = { _ in }
    /// What the session offers it, when the test hands it over (to send through it).
    public weak var context: (any ApplicationContext)?

    public init(kinds: Set<UInt8> = [], numbers: Set<UInt8> = [], context: (any ApplicationContext)? = nil) {
        self.applicationKinds = kinds
        self.appNumbers = numbers
        self.context = context
    }

    /// The messages received so far.
    public var messages: [Message] {
        calls.compactMap { if case .received(let message, _, _) = $0 { message } else { nil } }
    }

    public func received(_ message: Message, from peer: PeerID, reliably: Bool) throws(WireError) {
        try check(message)
        calls.append(.received(message, from: peer, reliably: reliably))
        onMessage(message)
    }

    public func peerConnected(_ peer: PeerID) { calls.append(.peerConnected(peer)) }
    public func membershipChanged() { calls.append(.membershipChanged) }
    public func peerRestarted(_ peer: PeerID) { calls.append(.peerRestarted(peer)) }
    public func peerMissedMessages(_ peer: PeerID) { calls.append(.peerMissedMessages(peer)) }
    public func sessionStopped() { calls.append(.sessionStopped) }
}
