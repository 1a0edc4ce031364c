import WireCodec

/// A command of an application's own kind, for tests of the layers that carry such commands unread: shaped as the
/// original apps' `counterIncrement` (kind 0x27, the count as a varint), so that its frames are the wire's.
extension Message {
    /// An application command of kind 0x27 carrying `count`.
    public static func counterIncrement(count: UInt64) -> Message {
        var body: [UInt8] = []
        var value = count
        while value >= 0x80 {
            body.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        body.append(UInt8(value))
        return .application(ApplicationMessage(kind: 0x27, body: body))
    }

    /// The count of a ``counterIncrement(count:)``; nil for any other message.
    public var incrementCount: UInt64? {
        guard case .application(let message) = self, message.kind == 0x27 else { return nil }
        return try? message.read { reader throws(WireError) in try reader.readVarint("count", max: .max) }
    }
}

extension MessageKind {
    /// The kind of ``Message/counterIncrement(count:)``.
    public static let counterIncrement = MessageKind.application(0x27)
}
