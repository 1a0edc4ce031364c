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
    /// Sends `message` on the reliable channel to `peer`: exactly once and in order, kept while it is away.
    func sendReliably(_ message: Message, to peer: PeerID)
    /// Sends `message` reliably to every member.
    func sendReliablyToMembers(_ message: Message)
    /// Sends `message` to every connected peer, reliably or (as a datagram where they get through) not.
    func sendToConnectedPeers(_ message: Message, reliably: Bool)
}
