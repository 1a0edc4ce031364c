import NIOCore
import NIOWebSocket

/// How fast one page's frames are taken, on the event loop before any of them reaches the page's task: a move over its
/// budget (`PageMoveBudget`) is dropped here (a later position or the drop supersedes it), and a page that sends
/// other operations faster than any page does (`PageMoveBudget.capacity` at once, then one every `interval`) is failed
/// with 1008. A flooding page so costs the daemon little more than reading its bytes.
final class PageInboundBudget: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var moves = PageMoveBudget()
    private var operations = PageMoveBudget()
    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary where Self.isMove(frame):
            guard moves.take(at: .now) else { return }
        case .text, .binary:
            guard operations.take(at: .now) else {
                failed = true
                var reason = ByteBuffer()
                reason.write(webSocketErrorCode: .policyViolation)
                reason.writeString("more operations than a page sends")
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: reason)), promise: nil)
                context.close(promise: nil)
                return
            }
        default:
            break
        }
        context.fireChannelRead(data)
    }

    /// A binary frame whose first byte (unmasked) is the binary move's code.
    static func isMove(_ frame: WebSocketFrame) -> Bool {
        guard let first = frame.data.getInteger(at: frame.data.readerIndex, as: UInt8.self) else { return false }
        let mask = frame.maskKey.map { $0[$0.startIndex] } ?? 0
        return first ^ mask == PageOperation.binaryMove
    }
}
