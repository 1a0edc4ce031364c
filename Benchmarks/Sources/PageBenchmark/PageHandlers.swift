import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket

/// A bubble's state as a page hears it.
struct BubbleState: Sendable {
    var view: Int
    var x: Double
    var y: Double
    var held: Bool
}

/// Reads a page's frames on its loop: counts them, and hands every `bubble` message to `onBubble` (read from the
/// JSON's bytes without a decoder, so that 200 pages cost the benchmark little next to the daemon).
final class PageReader: ChannelInboundHandler, Sendable {
    typealias InboundIn = WebSocketFrame

    private let onBubble: @Sendable (BubbleState) -> Void
    private let counts = NIOLockedValueBox((frames: 0, bytes: 0))

    init(onBubble: @escaping @Sendable (BubbleState) -> Void = { _ in }) {
        self.onBubble = onBubble
    }

    var frames: Int { counts.withLockedValue { $0.frames } }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        counts.withLockedValue {
            $0.frames += 1
            $0.bytes += frame.data.readableBytes
        }
        guard frame.opcode == .text else {
            if frame.opcode == .connectionClose { context.close(promise: nil) }
            return
        }
        let bytes = Array(frame.data.readableBytesView)
        guard Self.find(Array(#""type":"bubble""#.utf8), in: bytes) != nil,
            let view = Self.number(after: #""view":"#, in: bytes), let x = Self.number(after: #""x":"#, in: bytes),
            let y = Self.number(after: #""y":"#, in: bytes)
        else { return }
        let held = Self.find(Array(#""holder":""#.utf8), in: bytes) != nil
        onBubble(BubbleState(view: Int(view), x: x, y: y, held: held))
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if bytes[start..<start + needle.count].elementsEqual(needle) { return start + needle.count }
        }
        return nil
    }

    /// The JSON number right after `key`.
    private static func number(after key: String, in bytes: [UInt8]) -> Double? {
        guard let start = find(Array(key.utf8), in: bytes) else { return nil }
        let digits = bytes[start...].prefix { "0123456789.-+eE".utf8.contains($0) }
        return Double(String(decoding: digits, as: UTF8.self))
    }
}

/// Writes binary moves of one bubble as fast as the socket takes them, until `stop()`.
final class MoveFlooder: ChannelInboundHandler, Sendable {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let state = NIOLockedValueBox((running: false, sent: 0))
    private let view: UInt8

    init(view: UInt8) {
        self.view = view
    }

    var sent: Int { state.withLockedValue { $0.sent } }

    /// Starts flooding (call on the channel's loop).
    func start(context: ChannelHandlerContext) {
        state.withLockedValue { $0.running = true }
        write(context: context)
    }

    func stop() {
        state.withLockedValue { $0.running = false }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        write(context: context)
        context.fireChannelWritabilityChanged()
    }

    /// 100 moves, then again after whatever else waits on the loop, while the socket takes them.
    private func write(context: ChannelHandlerContext) {
        guard context.channel.isWritable, state.withLockedValue({ $0.running }) else { return }
        let sent = state.withLockedValue { state in
            state.sent += 100
            return state.sent
        }
        for index in sent - 100..<sent {
            let frame = PageClient.move(view, x: Float(60 + index % 100), y: Float(60 + index % 50))
            context.write(wrapOutboundOut(frame), promise: nil)
        }
        context.flush()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute { bound.value.0.write(context: bound.value.1) }
    }
}
