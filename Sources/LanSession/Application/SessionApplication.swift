import NIOCore
import WireCodec

/// An application a session carries: the session hands it the messages of its kinds (or numbers) and tells it how
/// membership changes; it sends through its ``ApplicationContext``. The session knows nothing else of it.
///
/// Add one with ``Session/addApplication(_:)`` before the session starts. It lives on the session's event loop:
/// every call comes from there, and none may block. Give it a `Sendable` face of its own for the application's users
/// (``ApplicationHandle`` hops to the loop), and its own events (``EventFanout`` hands them to any number of
/// readers), as the original apps do in the BubblesAndCounter module.
public protocol SessionApplication: AnyObject, SendableMetatype {
    /// The kinds of its own it takes, as `Message.application(_:)` messages: kind bytes of
    /// `MessageKind.applicationKinds` (`0x20...0x29`, docs/wire-format.md section 3.1), whose bodies it reads
    /// itself. Read once, when the application is added; two applications of one session may not share a kind.
    var applicationKinds: Set<UInt8> { get }

    /// The application numbers of the `Message.appMessage(_:)` messages it takes (see `AppMessage.app`): an
    /// application of its own sends and receives those. Read once; two applications may not share a number.
    var appNumbers: Set<UInt8> { get }

    /// A message of its kinds or numbers arrived from `peer`: on the reliable channel (exactly once, in order) or as
    /// a datagram.
    ///
    /// - Throws: `WireError` when the body of a message of its kinds is malformed: the session then closes the link
    ///   it came on without a `bye` (or drops the rest of the datagram), as the codec does for a malformed message of
    ///   the session's own kinds (docs/wire-format.md section 11).
    func received(_ message: Message, from peer: PeerID, reliably: Bool) throws(WireError)

    /// `peer` connected (its first link carries traffic): greet it and send it what it may lack.
    func peerConnected(_ peer: PeerID)

    /// The set of connected peers changed: a peer connected (after ``peerConnected(_:)``), or is gone.
    func membershipChanged()

    /// `peer` restarted: what it held died with its process, and what was sent to it is lost.
    func peerRestarted(_ peer: PeerID)

    /// Messages this application sent to `peer` were held back, not sent (its replay buffer was full: it was away or
    /// slow to acknowledge), and there is room again: send it the state again, whole. Payloads (data, streams,
    /// resources) are never held back this way.
    func peerMissedMessages(_ peer: PeerID)

    /// How unreliable messages reach `peer` changed (datagrams, or its reliable link when they do not get through):
    /// send again what the lost datagrams may have carried (a position that moves by datagram), so that the peer does
    /// not show a stale one until the next change.
    func unreliableRouteChanged(_ peer: PeerID, to route: UnreliableRoute)

    /// The session's housekeeping tick, every 50 ms, for anti-entropy and timeouts.
    func tick(now: NIODeadline)

    /// The session stopped: nothing more is delivered or sent; end the application's own event streams.
    func sessionStopped()
}

extension SessionApplication {
    public var applicationKinds: Set<UInt8> { [] }
    public var appNumbers: Set<UInt8> { [] }
    public func peerConnected(_ peer: PeerID) {}
    public func membershipChanged() {}
    public func peerRestarted(_ peer: PeerID) {}
    public func peerMissedMessages(_ peer: PeerID) {}
    public func unreliableRouteChanged(_ peer: PeerID, to route: UnreliableRoute) {}
    public func tick(now: NIODeadline) {}
    public func sessionStopped() {}
}
