import NIOCore
import SessionControl

/// What a control connection's task reads: each request line, decoded.
enum ControlInput: Sendable {
    case command(ControlCommand)
    /// A request with an unknown command or a missing or bad argument: the task answers with the error.
    case refused(ControlError)
    /// A line that is not a request: the task logs it and closes the connection.
    case malformed(ByteBuffer)
}
