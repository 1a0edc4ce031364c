/// Every message LanSession sends, on any channel.
public enum Message: Hashable, Sendable {
    /// See ``MessageKind/hello``. Boxed: the largest payload, so that every other message stays small to copy.
    indirect case hello(Hello)
    /// See ``MessageKind/accept``.
    case accept(Accept)
    /// See ``MessageKind/decline``.
    case decline(DeclineReason)
    /// See ``MessageKind/invitation``.
    case invitation(Invitation)
    /// See ``MessageKind/ping``.
    case ping(Ping)
    /// See ``MessageKind/pong``.
    case pong(Ping)
    /// See ``MessageKind/bye``.
    case bye(ByeReason)
    /// See ``MessageKind/ack``: the highest sequence number received.
    case ack(sequence: UInt64)
    /// See ``MessageKind/resume``.
    case resume(Resume)
    /// See ``MessageKind/members``.
    case members([Member])
    /// See ``MessageKind/noise``: one Noise handshake message, at most `Wire.maxNoiseMessageLength` bytes.
    case noise([UInt8])
    /// See ``MessageKind/trust``: at most `Wire.maxTrustStatements` statements.
    case trust([TrustStatement])
    /// See ``MessageKind/pairing``.
    case pairing(PairingStep)
    /// See ``MessageKind/application(_:)``: a command of an application's own kind, its body unread.
    case application(ApplicationMessage)
    /// See ``MessageKind/data``: at most `Wire.maxDataLength` bytes (`Wire.maxUnreliableDataLength` in a datagram).
    case data([UInt8])
    /// See ``MessageKind/streamOpen``.
    case streamOpen(StreamOpen)
    /// See ``MessageKind/streamChunk``.
    case streamChunk(StreamChunk)
    /// See ``MessageKind/streamCredit``.
    case streamCredit(StreamCredit)
    /// See ``MessageKind/streamEnd``.
    case streamEnd(StreamEnd)
    /// See ``MessageKind/appMessage``: at most `Wire.maxDataLength` bytes (`Wire.maxUnreliableDataLength` in a
    /// datagram) for the application numbered ``AppMessage/app``.
    case appMessage(AppMessage)
    /// See ``MessageKind/durableData``: at most `Wire.maxDataLength` bytes, reliable only.
    case durableData(DurableData)

    /// The message's kind byte.
    @inlinable
    public var kind: MessageKind {
        switch self {
        case .hello: .hello
        case .accept: .accept
        case .decline: .decline
        case .invitation: .invitation
        case .ping: .ping
        case .pong: .pong
        case .bye: .bye
        case .ack: .ack
        case .resume: .resume
        case .members: .members
        case .noise: .noise
        case .trust: .trust
        case .pairing: .pairing
        case .application(let message): .application(message.kind)
        case .data: .data
        case .streamOpen: .streamOpen
        case .streamChunk: .streamChunk
        case .streamCredit: .streamCredit
        case .streamEnd: .streamEnd
        case .appMessage: .appMessage
        case .durableData: .durableData
        }
    }
}
