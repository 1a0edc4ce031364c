import NIOCore
import NIOWebSocket

/// RFC 6455 as written for the frames a page sends: what SwiftNIO's decoder lets through and the RFC says must fail the
/// connection (masking, RSV bits, reserved opcodes, fragments out of order), and fragmented messages put back
/// together. A plain value: each frame in, a verdict out.
struct PageFrameRules {
    /// What to do with a frame.
    enum Verdict {
        /// A whole message (a frame with FIN, or the fragments of one put together), unmasked.
        case message(WebSocketFrame)
        /// A control frame: close, ping or pong.
        case control(WebSocketFrame)
        /// A fragment kept until its message ends.
        case partial
        /// Fail the connection with this close code (1002 protocol error, 1009 too big) and reason.
        case fail(WebSocketErrorCode, String)
    }

    /// The largest message put together from fragments, in bytes (a frame alone is capped by the decoder).
    static let maxMessageBytes = 1 << 16

    /// The opcode and the bytes of the message whose fragments are arriving.
    private var fragments: (opcode: WebSocketOpcode, data: ByteBuffer)?

    mutating func accept(_ frame: WebSocketFrame) -> Verdict {
        guard frame.maskKey != nil else { return .fail(.protocolError, "a client's frame must be masked (5.1)") }
        guard !frame.rsv1, !frame.rsv2, !frame.rsv3 else {
            return .fail(.protocolError, "RSV bits set with no extension negotiated (5.2)")
        }
        switch frame.opcode {
        case .connectionClose, .ping, .pong:
            return .control(frame)
        case .text, .binary:
            guard fragments == nil else {
                return .fail(.protocolError, "a new message before the fragmented one ended (5.4)")
            }
            if frame.fin { return .message(Self.whole(frame.opcode, frame.unmaskedData)) }
            fragments = (frame.opcode, frame.unmaskedData)
            return .partial
        case .continuation:
            guard var message = fragments else {
                return .fail(.protocolError, "a continuation frame with no message started (5.4)")
            }
            var data = frame.unmaskedData
            guard message.data.readableBytes + data.readableBytes <= Self.maxMessageBytes else {
                fragments = nil
                return .fail(.messageTooLarge, "a message of more than \(Self.maxMessageBytes) bytes")
            }
            message.data.writeBuffer(&data)
            guard frame.fin else {
                fragments = message
                return .partial
            }
            fragments = nil
            return .message(Self.whole(message.opcode, message.data))
        default:
            return .fail(.protocolError, "reserved opcode \(frame.opcode) (5.2)")
        }
    }

    private static func whole(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, data: data)
    }
}
