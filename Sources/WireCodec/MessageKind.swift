/// The first byte of every message body: which message follows.
///
/// Kinds `0x01...0x1F` control a link and are never sequenced. Kinds `0x20...0x3F` are the applications' commands;
/// on the reliable channel each one consumes the next sequence number (see `ack`): `0x20...0x29` belong to the original
/// apps (the BubblesAndCounter module; they stay here, at their numbers, for compatibility), `0x30...0x34` are the
/// payloads any application sends through the session, and `appMessage` carries the messages of any application of
/// its own, by number.
public enum MessageKind: UInt8, Hashable, Sendable, CaseIterable {
    // MARK: Link control
    /// Opens a link: protocol version, peer id, names, capabilities.
    case hello = 0x01
    /// Accepts an invitation and sets the datagram link token.
    case accept = 0x02
    /// Declines an invitation, with a reason.
    case decline = 0x03
    /// Invites the receiver into the session, with context bytes and a timeout.
    case invitation = 0x04
    /// Asks for a `pong` carrying the same nonce and timestamp.
    case ping = 0x05
    /// Answers a `ping`.
    case pong = 0x06
    /// Closes the link on purpose, with a reason.
    case bye = 0x07
    /// Acknowledges every sequenced message up to a sequence number.
    case ack = 0x08
    /// Makes a link the one that carries data, and says where its data resumes: what was received, what comes next.
    case resume = 0x09
    /// The members the sender is connected to, and where each one was reached, so that every member can link to
    /// every other one.
    case members = 0x0A
    /// A message of the Noise handshake (section 9): three of them after the hellos; everything after the last one
    /// on the link is sealed.
    case noise = 0x0B
    /// Signed statements about members: introductions and removals (section 9.6).
    case trust = 0x0C
    /// A step of pairing two devices: request, confirm, reject (section 9.5).
    case pairing = 0x0D

    // MARK: Application commands of the original apps (the BubblesAndCounter module)
    /// The original apps' greeting: the sender's name.
    case handshake = 0x20
    /// Proposes a player index.
    case negotiate = 0x21
    /// Confirms a player index.
    case negotiateConfirm = 0x22
    /// The player index of every peer.
    case layout = 0x23
    /// Picks a bubble up.
    case pickUp = 0x24
    /// Moves a held bubble.
    case move = 0x25
    /// Drops a bubble at its final position.
    case drop = 0x26
    /// The sender's own count after an increment (absolute, so that a replay or a relay is harmless).
    case counterIncrement = 0x27
    /// Every counter the sender knows, per peer, for merging.
    case counterState = 0x28
    /// A bubble's holder and position, as decided by the session's coordinator.
    case bubbleState = 0x29

    // MARK: Payloads of any application
    /// An application's message: opaque bytes, reliable (sequenced) or as a datagram.
    case data = 0x30
    /// Opens a byte stream or a resource transfer to the receiver.
    case streamOpen = 0x31
    /// Bytes of an open stream, at an offset.
    case streamChunk = 0x32
    /// The receiver's flow control of a stream: where the bytes go on and how far the opener may send.
    case streamCredit = 0x33
    /// Ends a stream, from either side: finished (with a resource's digest), cancelled, failed or declined.
    case streamEnd = 0x34
    /// A message of an application the receiver runs, named by the application's number: opaque bytes, reliable
    /// (sequenced) or as a datagram. Sent only to peers whose `hello` announces ``Capabilities/appMessages``.
    case appMessage = 0x35

    /// Whether messages of this kind take a sequence number on the reliable channel.
    @inlinable
    public var isSequenced: Bool { rawValue >= 0x20 }
}
