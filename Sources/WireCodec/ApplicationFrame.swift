/// A frame read for an application (``StreamFraming/decodeApplicationFrame(_:limits:read:)``): one of its commands,
/// read by the application straight from the frame's bytes, or any other message, read as
/// ``StreamFraming/decodeFrame(_:limits:)`` reads it.
public enum ApplicationFrame<Command> {
    /// A command of a kind the application takes.
    case command(Command)
    /// A message of the session's own kinds, or of an application kind the application does not take
    /// (``Message/application(_:)``, its body unread).
    case other(Message)
}

extension ApplicationFrame: Sendable where Command: Sendable {}
extension ApplicationFrame: Equatable where Command: Equatable {}
