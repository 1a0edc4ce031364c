import Foundation
import NIOCore
import SessionControl

/// Decodes a control connection's request lines on its event loop (the common shape by `FlatRequest`, any other by
/// `JSONDecoder`) into commands, and answers there, at once, a request that can be answered without waiting
/// (``answerNow``: an `increment` whose count saves in place; a refused request), so that such a request goes from
/// the socket to the session and back to the socket with no task in between. Every other request goes on to the
/// connection's task, decoded. While a request is with the task, the ones after it follow it there, so that every
/// reply keeps its request's place (docs/control-protocol.md: one reply per request, in order); the task says when it
/// answered one (``answered()``).
final class ControlRequestHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ControlInput
    typealias OutboundOut = ByteBuffer

    /// The reply to a command answered on the loop; nil hands the command to the task.
    private let answerNow: (ControlCommand) -> Result<ControlResult, ControlError>?
    private let decoder = JSONDecoder()
    /// Requests handed to the task and not yet answered.
    private var withTask = 0

    init(answerNow: @escaping (ControlCommand) -> Result<ControlResult, ControlError>?) {
        self.answerNow = answerNow
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        guard
            let request = FlatRequest.parse(line)
                ?? (try? decoder.decode(ControlRequestLine.self, from: Data(line.readableBytesView)))
        else {
            withTask += 1
            context.fireChannelRead(wrapInboundOut(.malformed(line)))
            return
        }
        let input: ControlInput
        let now: Result<ControlResult, ControlError>?
        do {
            let command = try ControlCommand(request)
            input = .command(command)
            now = withTask == 0 ? answerNow(command) : nil
        } catch {
            input = .refused(error)
            now = .failure(error)
        }
        if withTask == 0, let now {
            var reply = now.replyLine
            reply.append(0x0A)
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: reply)), promise: nil)
            return
        }
        withTask += 1
        context.fireChannelRead(wrapInboundOut(input))
    }

    /// The task answered a request handed to it (its reply is written).
    func answered() {
        withTask = max(0, withTask - 1)
    }
}

extension NIOLoopBound<ControlRequestHandler> {
    /// Tells the handler, on its loop, that the task answered a request (its reply written before).
    func answered() {
        if eventLoop.inEventLoop {
            value.answered()
        } else {
            eventLoop.execute { self.value.answered() }
        }
    }
}
