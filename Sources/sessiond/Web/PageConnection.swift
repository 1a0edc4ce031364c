import Logging
import NIOCore
import NIOWebSocket

/// One open page: its snapshot first, then every change as it happens (pushed, never polled, by the `PageBroadcast`
/// it joins), and the operations it asks for, read here.
struct PageConnection {
    let connection: PageServer.WebSocketConnection
    let writer: NIOLoopBound<PageWriter>
    let broadcast: PageBroadcast
    let logger: Logger

    func run() async throws {
        let feed = broadcast.feed
        let drags = PageDrags()
        let page = PageBroadcast.Page(writer: writer, drags: drags)
        // Joined before the snapshot is taken: what changes meanwhile follows it.
        let id = broadcast.add(page)
        defer { broadcast.remove(id) }
        page.start(with: await feed.snapshot())
        try await connection.executeThenClose { inbound, outbound in
            var rules = PageFrameRules()
            for try await received in inbound {
                let frame: WebSocketFrame
                switch rules.accept(received) {
                case .message(let message), .control(let message):
                    frame = message
                case .partial:
                    continue
                case .fail(let code, let reason):
                    logger.debug("failing a page's WebSocket: \(reason)")
                    var data = ByteBuffer()
                    data.write(webSocketErrorCode: code)
                    data.writeString(reason)
                    try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
                    return
                }
                switch frame.opcode {
                case .text, .binary:
                    guard let operation = PageOperation(frame) else {
                        page.send(.error("not an operation"))
                        continue
                    }
                    switch operation.op {
                    case "pickup": drags.askedFor(operation)
                    case "move": if drags.holdsBack(operation) { continue }
                    case "drop": drags.forget(operation)
                    default: break
                    }
                    if let refusal = await feed.perform(operation) {
                        if operation.op == "pickup" { drags.forget(operation) }
                        page.send(.error(refusal))
                    }
                case .ping:
                    try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
                case .connectionClose:
                    // Answered with a close of its own (RFC 6455 5.5.1), then the connection ends.
                    var data = ByteBuffer()
                    data.write(webSocketErrorCode: .normalClosure)
                    try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
                    return
                default:
                    continue
                }
            }
        }
    }
}
