import Logging
import NIOCore
import WireCodec

/// An application a session carries: the core hands it the messages of its kinds and the changes of membership, and
/// it sends through its ``ApplicationContext``. The core knows nothing else of it.
///
/// Runs on the session's event loop, like the core: every call comes from there, and it must not block.
protocol SessionApplication: AnyObject {
    /// Whether it takes messages of `kind` (an application command, `0x20...0x3F`).
    func handles(_ kind: MessageKind) -> Bool
    /// A message of its kinds arrived from `peer`: on the reliable channel (exactly once, in order) or not.
    func received(_ message: Message, from peer: PeerID, reliably: Bool)
    /// `peer` connected (its first link carries traffic): greet it and send what it may lack.
    func peerConnected(_ peer: PeerID)
    /// The set of connected peers changed (a peer connected or is gone).
    func membershipChanged()
    /// `peer` restarted: what it held died with its process.
    func peerRestarted(_ peer: PeerID)
    /// Messages sent to `peer` were dropped unacknowledged (its replay buffer overflowed): resend its state.
    func peerMissedMessages(_ peer: PeerID)
    /// The session's housekeeping tick (every 50 ms), for anti-entropy.
    func tick(now: NIODeadline)
    /// Adds what the application knows of `peer` to its snapshot (a player index, say).
    func describe(_ peer: PeerID, into info: inout PeerInfo)
}

/// What a session offers the applications it carries.
protocol ApplicationContext: AnyObject {
    var localPeer: PeerID { get }
    var loop: any EventLoop { get }
    var logger: Logger { get }
    var configuration: SessionConfiguration { get }
    /// Whether the session runs (not stopped).
    var isRunning: Bool { get }
    /// Peers connected now.
    var connectedPeers: [PeerID] { get }
    /// Calls `body` with each member: connected now, or connected before and expected back (what is sent to them
    /// waits for them). No array is made: this runs per message.
    func forEachMember(_ body: (PeerID) -> Void)
    /// The display name of `peer` (empty until its hello).
    func name(of peer: PeerID) -> String
    /// Sends `message` on the reliable channel to `peer` (exactly once, in order; kept while it is away).
    func sendReliably(_ message: Message, to peer: PeerID)
    /// Sends `message` reliably to every member.
    func sendReliablyToMembers(_ message: Message)
    /// Sends `message` to every connected peer, reliably or (as a datagram where they get through) not.
    func sendToConnectedPeers(_ message: Message, reliably: Bool)
    /// Hands `event` to every subscriber.
    func emit(_ event: SessionEvent)
}
