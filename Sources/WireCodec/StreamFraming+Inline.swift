/// The path of an application's command whose body is kept in place (``ApplicationMessage/inlineCapacity`` bytes at
/// most: every move, increment, pick-up and drop of the original apps): written from its body's words straight into
/// the frame, and read from the frame straight into them, without the general path's size computation and dispatch
/// over every kind.
///
/// It produces and accepts exactly the bytes of the general path (the tests compare both); anything else, including
/// every frame the general path would refuse, goes to the general path, which also produces the errors.
extension StreamFraming {
    /// Writes an application's command with a body in place at the start of `destination`; nil for any other message
    /// (and for one the general path refuses or cannot fit).
    @inlinable @inline(__always)
    static func encodeInline(
        _ message: Message, into destination: UnsafeMutableRawBufferPointer, limits: WireLimits
    ) -> Int? {
        guard case .application(let application) = message,
            case .inline(let first, let second, let count) = application.storage,
            MessageKind.applicationKinds.contains(application.kind)
        else { return nil }
        // A body of at most 17 bytes (kind and fields): a one-byte header.
        let body = 1 + Int(count)
        let size = 1 + body
        guard body <= limits.maxFrameLength, destination.count >= size else { return nil }
        destination.storeBytes(of: UInt8(body), toByteOffset: 0, as: UInt8.self)
        destination.storeBytes(of: application.kind, toByteOffset: 1, as: UInt8.self)
        ApplicationMessage.store(
            (first, second), count: Int(count), into: UnsafeMutableRawBufferPointer(rebasing: destination[2..<size]))
        return size
    }

    /// Reads a frame of an application's command whose body fits in place at the start of `bytes`; nil for anything
    /// else (and for what the general path would refuse).
    @inlinable @inline(__always)
    static func decodeInline(_ bytes: UnsafeRawBufferPointer, limits: WireLimits) -> (message: Message, length: Int)? {
        guard let (kind, fields, length) = shortApplicationFrame(bytes, limits: limits),
            fields.count <= ApplicationMessage.inlineCapacity
        else { return nil }
        return (.application(ApplicationMessage(kind: kind, inline: fields)), length)
    }
}
