import Foundation
import NIOCore
import NIOWebSocket

extension PageOperation {
    /// A move as a binary frame (docs/control-protocol.md, "The page"): the one operation a drag sends every frame,
    /// read without a JSON decoder. Byte 0 is this code, byte 1 the bubble, then x and y as big-endian float32.
    static let binaryMove: UInt8 = 1
    /// The length of a binary move, in bytes.
    static let binaryMoveLength = 10

    /// The operation a frame of the page carries: a JSON text frame, or a binary move; nil for anything else.
    init?(_ frame: WebSocketFrame) {
        var data = frame.unmaskedData
        switch frame.opcode {
        case .text:
            guard let text = data.readString(length: data.readableBytes),
                let operation = try? JSONDecoder().decode(PageOperation.self, from: Data(text.utf8))
            else { return nil }
            self = operation
        case .binary:
            guard data.readableBytes == Self.binaryMoveLength, data.readInteger(as: UInt8.self) == Self.binaryMove,
                let view = data.readInteger(as: UInt8.self), let x = data.readInteger(as: UInt32.self),
                let y = data.readInteger(as: UInt32.self)
            else { return nil }
            let (fx, fy) = (Float(bitPattern: x), Float(bitPattern: y))
            guard fx.isFinite, fy.isFinite else { return nil }
            self.init(op: "move", view: Int(view), x: Double(fx), y: Double(fy))
        default:
            return nil
        }
    }
}
