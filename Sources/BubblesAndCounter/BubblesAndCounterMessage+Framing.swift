import WireCodec

/// The apps' messages as stream frames, written from their fields straight into the frame's memory and read from the
/// frame's bytes straight into the message, with no ``Message`` or ``ApplicationMessage`` in between: the codec writes
/// and reads the frame's header and kind byte (``StreamFraming/encodeApplication(kind:bodySize:into:limits:write:)``,
/// ``StreamFraming/decodeApplicationFrame(_:limits:read:)``), this module the fields, as for the session's
/// application messages. The bytes are those of ``message()`` framed by ``StreamFraming/encode(_:limits:)``.
///
/// The messages sent many times a second, a move and an increment, are written and read inline in the caller, with
/// their fixed layout; every other message, and every one the codec refuses, goes through the general path, out of
/// line, which also throws the errors.
extension BubblesAndCounterMessage {
    /// Bytes the message takes as one frame, after checking every field and the frame limit.
    ///
    /// - Throws: ``WireError`` as ``encodeFrame(into:limits:)-(UnsafeMutableRawBufferPointer,_)`` does.
    public func frameSize(limits: WireLimits = .default) throws(WireError) -> Int {
        try encode { _, size, _ throws(WireError) in
            try StreamFraming.applicationFrameSize(bodySize: size, limits: limits)
        }
    }

    /// Writes the message as one frame at the start of `destination`, which must hold at least ``frameSize(limits:)``
    /// bytes, and returns the bytes written. Allocates nothing.
    ///
    /// - Throws: ``WireError`` for a field the codec would refuse (see ``applicationMessage()``), or a frame above
    ///   `limits`; nothing is written.
    @inlinable @inline(__always) @discardableResult
    public func encodeFrame(
        into destination: UnsafeMutableRawBufferPointer, limits: WireLimits = .default
    ) throws(WireError) -> Int {
        switch self {
        case .move(let move) where move.x.isFinite && move.y.isFinite:
            return try StreamFraming.encodeApplication(
                kind: Kind.move.rawValue, bodySize: Self.moveBodySize, into: destination, limits: limits
            ) { writer in Self.write(move, to: &writer) }
        case .counterIncrement(let count) where count >= Self.minIncrementCount:
            return try StreamFraming.encodeApplication(
                kind: Kind.counterIncrement.rawValue, bodySize: ByteWriter.varintSize(count), into: destination,
                limits: limits
            ) { writer in writer.writeVarint(count) }
        default:
            return try encodeAnyFrame(into: destination, limits: limits)
        }
    }

    /// ``encodeFrame(into:limits:)-(UnsafeMutableRawBufferPointer,_)`` of any message: the general path.
    @usableFromInline
    func encodeAnyFrame(into destination: UnsafeMutableRawBufferPointer, limits: WireLimits) throws(WireError) -> Int {
        try encode { kind, size, write throws(WireError) in
            try StreamFraming.encodeApplication(
                kind: kind, bodySize: size, into: destination, limits: limits, write: write)
        }
    }

    /// Appends the message as one frame to `buffer`.
    ///
    /// - Throws: ``WireError`` as ``encodeFrame(into:limits:)-(UnsafeMutableRawBufferPointer,_)`` does.
    public func encodeFrame(into buffer: inout [UInt8], limits: WireLimits = .default) throws(WireError) {
        try encode { kind, size, write throws(WireError) in
            try StreamFraming.encodeApplication(kind: kind, bodySize: size, into: &buffer, limits: limits, write: write)
        }
    }

    /// The message as one frame in a new array.
    ///
    /// - Throws: ``WireError`` as ``encodeFrame(into:limits:)-(UnsafeMutableRawBufferPointer,_)`` does.
    public func frame(limits: WireLimits = .default) throws(WireError) -> [UInt8] {
        var buffer: [UInt8] = []
        try encodeFrame(into: &buffer, limits: limits)
        return buffer
    }

    /// Decodes one frame at the start of `bytes`: a message of the apps' kinds read straight from its bytes, or any
    /// other message as ``StreamFraming/decodeFrame(_:limits:)`` reads it. Nil when more bytes are needed.
    ///
    /// - Throws: ``WireError`` for a malformed frame or body, with offsets from the start of the frame.
    @inlinable @inline(__always)
    public static func decodeFrame(
        _ bytes: UnsafeRawBufferPointer, limits: WireLimits = .default
    ) throws(WireError) -> (frame: ApplicationFrame<Self>, length: Int)? {
        if let (kind, fields, length) = StreamFraming.shortApplicationFrame(bytes, limits: limits),
            let message = readFrequent(kind, fields)
        {
            return (.command(message), length)
        }
        return try decodeAnyFrame(bytes, limits: limits)
    }

    /// ``decodeFrame(_:limits:)`` of any frame: the general path.
    @usableFromInline
    static func decodeAnyFrame(
        _ bytes: UnsafeRawBufferPointer, limits: WireLimits
    ) throws(WireError) -> (frame: ApplicationFrame<Self>, length: Int)? {
        try StreamFraming.decodeApplicationFrame(bytes, limits: limits) { kind, reader throws(WireError) in
            guard let kind = Kind(rawValue: kind) else { return nil }
            return try read(kind, from: &reader)
        }
    }
}
