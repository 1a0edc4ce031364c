import Logging
import NIOCore
import WireCodec

/// What a session offers the applications it carries: who is there, and sends by peer id. Used on the session's event
/// loop only, like the application itself.
public protocol ApplicationContext: AnyObject {
    /// This peer.
    var localPeer: PeerID { get }
    /// This peer's display name.
    var displayName: String { get }
    /// The session's event loop: every call to the application comes from it.
    var eventLoop: any EventLoop { get }
    /// The session's logger, for debug and trace messages.
    var logger: Logger { get }
    /// Whether the session runs (it was not stopped).
    var isRunning: Bool { get }
    /// The peers connected now.
    var connectedPeers: [PeerID] { get }
    /// Calls `body` with each member: connected now, or connected before and expected back (what is sent to them
    /// waits for them). No array is made: this runs per message.
    func forEachMember(_ body: (PeerID) -> Void)
    /// The display name of `peer` (empty until its hello).
    func name(of peer: PeerID) -> String
    /// Sends `message` on the reliable channel to `peer`: exactly once and in order, kept while it is away. While
    /// the peer's replay buffer is full (it is away or slow to acknowledge), the message is held back instead, not
    /// sent, and the application told once there is room (``SessionApplication/peerMissedMessages(_:)``).
    ///
    /// An application sends its own messages only: `Message.application(_:)` and `Message.appMessage(_:)`.
    ///
    /// - Throws: ``SessionError/Code/invalidArgument`` for a message of the session's own kinds (link control below
    ///   `0x20`, and the payloads `data` and streams, `0x30...0x34`, which the session sends itself); nothing is sent.
    func sendReliably(_ message: Message, to peer: PeerID) throws(SessionError)
    /// Sends `message` reliably to every member.
    ///
    /// - Throws: ``SessionError/Code/invalidArgument`` for a message of the session's own kinds, as
    ///   ``sendReliably(_:to:)``.
    func sendReliablyToMembers(_ message: Message) throws(SessionError)
    /// Sends `message` to every connected peer, reliably or (as a datagram where they get through) not.
    ///
    /// - Throws: ``SessionError/Code/invalidArgument`` for a message of the session's own kinds, as
    ///   ``sendReliably(_:to:)``.
    func sendToConnectedPeers(_ message: Message, reliably: Bool) throws(SessionError)
}

extension Message {
    /// Refuses a message an application may not send through its ``ApplicationContext``: one of the session's own
    /// kinds.
    func checkSentByApplication() throws(SessionError) {
        switch self {
        case .application, .appMessage: return
        default:
            throw SessionError(
                .invalidArgument,
                "\(kind) is the session's own message: an application sends its own kinds (0x20...0x29) or appMessage")
        }
    }
}
