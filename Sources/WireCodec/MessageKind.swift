/// The first byte of every message body: which message follows.
///
/// Kinds `0x01...0x1F` control a link and are never sequenced. Kinds `0x20...0x3F` are the applications' commands;
/// on the reliable channel each one consumes the next sequence number (see `ack`): `0x20...0x29` are an application's
/// own kinds, which the codec carries without reading them (``ApplicationMessage``; the original apps' in the
/// BubblesAndCounter module), `0x30...0x34` are the payloads any application sends through the session, and
/// `appMessage` carries the messages of any application of its own, by number.
public enum MessageKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    // MARK: Link control
    /// Opens a link: protocol version, peer id, names, capabilities.
    case hello
    /// Accepts an invitation and sets the datagram link token.
    case accept
    /// Declines an invitation, with a reason.
    case decline
    /// Invites the receiver into the session, with context bytes and a timeout.
    case invitation
    /// Asks for a `pong` carrying the same nonce and timestamp.
    case ping
    /// Answers a `ping`.
    case pong
    /// Closes the link on purpose, with a reason.
    case bye
    /// Acknowledges every sequenced message up to a sequence number.
    case ack
    /// Makes a link the one that carries data, and says where its data resumes: what was received, what comes next.
    case resume
    /// The members the sender is connected to, and where each one was reached, so that every member can link to
    /// every other one.
    case members
    /// A message of the Noise handshake (section 9): three of them after the hellos; everything after the last one
    /// on the link is sealed.
    case noise
    /// Signed statements about members: introductions and removals (section 9.6).
    case trust
    /// A step of pairing two devices: request, confirm, reject (section 9.5).
    case pairing

    // MARK: Kinds of an application's own
    /// A command of an application that takes kinds of its own, by its kind byte (one of ``applicationKinds``): the
    /// codec carries its body unread (``ApplicationMessage``).
    case application(UInt8)

    // MARK: Payloads of any application
    /// An application's message: opaque bytes, reliable (sequenced) or as a datagram.
    case data
    /// Opens a byte stream or a resource transfer to the receiver.
    case streamOpen
    /// Bytes of an open stream, at an offset.
    case streamChunk
    /// The receiver's flow control of a stream: where the bytes go on and how far the opener may send.
    case streamCredit
    /// Ends a stream, from either side: finished (with a resource's digest), cancelled, failed or declined.
    case streamEnd
    /// A message of an application the receiver runs, named by the application's number: opaque bytes, reliable
    /// (sequenced) or as a datagram. Sent only to peers whose `hello` announces ``Capabilities/appMessages``.
    case appMessage
    /// An application's durable message: opaque bytes with the sender's id for it, which only grows across the
    /// sender's restarts; reliable only. Sent only to peers whose `hello` announces ``Capabilities/durableData``.
    case durableData

    /// The kind bytes of applications' own commands (the original apps' `handshake` … `bubbleState`).
    @inlinable public static var applicationKinds: ClosedRange<UInt8> { 0x20...0x29 }

    /// The session's own kinds: every kind but ``application(_:)``.
    public static let sessionKinds: [MessageKind] = [
        .hello, .accept, .decline, .invitation, .ping, .pong, .bye, .ack, .resume, .members, .noise, .trust, .pairing,
        .data, .streamOpen, .streamChunk, .streamCredit, .streamEnd, .appMessage, .durableData,
    ]

    /// Every kind the codec reads: the session's own and the application kinds.
    public static let allKinds: [MessageKind] = sessionKinds + applicationKinds.map { .application($0) }

    /// The kind of byte `rawValue`; nil for a byte that names no kind (an unknown kind).
    @inlinable
    public init?(rawValue: UInt8) {
        switch rawValue {
        case 0x01: self = .hello
        case 0x02: self = .accept
        case 0x03: self = .decline
        case 0x04: self = .invitation
        case 0x05: self = .ping
        case 0x06: self = .pong
        case 0x07: self = .bye
        case 0x08: self = .ack
        case 0x09: self = .resume
        case 0x0A: self = .members
        case 0x0B: self = .noise
        case 0x0C: self = .trust
        case 0x0D: self = .pairing
        case 0x20...0x29: self = .application(rawValue)
        case 0x30: self = .data
        case 0x31: self = .streamOpen
        case 0x32: self = .streamChunk
        case 0x33: self = .streamCredit
        case 0x34: self = .streamEnd
        case 0x35: self = .appMessage
        case 0x36: self = .durableData
        default: return nil
        }
    }

    /// The kind byte.
    @inlinable
    public var rawValue: UInt8 {
        switch self {
        case .hello: 0x01
        case .accept: 0x02
        case .decline: 0x03
        case .invitation: 0x04
        case .ping: 0x05
        case .pong: 0x06
        case .bye: 0x07
        case .ack: 0x08
        case .resume: 0x09
        case .members: 0x0A
        case .noise: 0x0B
        case .trust: 0x0C
        case .pairing: 0x0D
        case .application(let kind): kind
        case .data: 0x30
        case .streamOpen: 0x31
        case .streamChunk: 0x32
        case .streamCredit: 0x33
        case .streamEnd: 0x34
        case .appMessage: 0x35
        case .durableData: 0x36
        }
    }

    /// Whether messages of this kind take a sequence number on the reliable channel.
    @inlinable
    public var isSequenced: Bool { rawValue >= 0x20 }

    /// Whether this is a kind of an application's own (``application(_:)``).
    @inlinable
    public var isApplication: Bool {
        if case .application = self { return true }
        return false
    }

    /// The kind's name as in docs/wire-format.md (`hello`, `streamOpen`), or `application 0x25`.
    public var description: String {
        switch self {
        case .hello: "hello"
        case .accept: "accept"
        case .decline: "decline"
        case .invitation: "invitation"
        case .ping: "ping"
        case .pong: "pong"
        case .bye: "bye"
        case .ack: "ack"
        case .resume: "resume"
        case .members: "members"
        case .noise: "noise"
        case .trust: "trust"
        case .pairing: "pairing"
        case .application(let kind): "application 0x" + String(kind, radix: 16)
        case .data: "data"
        case .streamOpen: "streamOpen"
        case .streamChunk: "streamChunk"
        case .streamCredit: "streamCredit"
        case .streamEnd: "streamEnd"
        case .appMessage: "appMessage"
        case .durableData: "durableData"
        }
    }
}
