/// What a stream carries: bytes for an application to read, or a resource (a file) for the receiver to store.
///
/// Unknown values are refused by the decoder (`valueOutOfRange`).
public struct StreamKind: NamedWireValue {
    /// The kind's wire value.
    public var rawValue: UInt8
    /// Wraps a wire value.
    @inlinable
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A named byte stream, read by the receiving application as it arrives.
    public static let bytes = StreamKind(rawValue: 0)
    /// A resource of a known size, stored by the receiver and verified with the SHA-256 carried by `streamEnd`.
    public static let resource = StreamKind(rawValue: 1)

    /// Whether the decoder knows this kind.
    @inlinable
    public var isKnown: Bool { rawValue <= 1 }

    public static let names = ["bytes", "resource"]
    public static let unknownName = "kind"
}

/// How a stream ended.
///
/// Unknown values received from newer peers are kept as they are and read as failures.
public struct StreamStatus: NamedWireValue {
    /// The status's wire value.
    public var rawValue: UInt8
    /// Wraps a wire value.
    @inlinable
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Every byte was sent (from the opener), or received, stored and verified (from the receiver).
    public static let finished = StreamStatus(rawValue: 0)
    /// Cancelled by the side that sends the `streamEnd`.
    public static let cancelled = StreamStatus(rawValue: 1)
    /// Failed: the reason says why (a disk error, a digest that did not match, a peer that restarted).
    public static let failed = StreamStatus(rawValue: 2)
    /// The receiver refused the stream before any byte was taken.
    public static let declined = StreamStatus(rawValue: 3)

    public static let names = ["finished", "cancelled", "failed", "declined"]
    public static let unknownName = "status"
}

/// Opens a stream from the sender (its opener) to the receiver.
public struct StreamOpen: Hashable, Sendable {
    /// Chosen by the opener, unique among the streams it opened to this receiver.
    public var id: UInt32
    /// Bytes for the application, or a resource to store.
    public var kind: StreamKind
    /// The stream's name, or the resource's file name; at most `Wire.maxStreamNameLength` bytes of UTF-8.
    public var name: String
    /// A resource's size in bytes; 0 for a byte stream.
    public var size: UInt64
    /// Names the resource's content across restarts (`Wire.resumeKeyLength` bytes, zeros for a byte stream): a
    /// receiver that holds part of a resource under this key asks for the rest only.
    public var resumeKey: [UInt8]

    /// Creates a stream opening.
    @inlinable
    public init(
        id: UInt32, kind: StreamKind, name: String, size: UInt64 = 0,
        resumeKey: [UInt8] = [UInt8](repeating: 0, count: Wire.resumeKeyLength)
    ) {
        self.id = id
        self.kind = kind
        self.name = name
        self.size = size
        self.resumeKey = resumeKey
    }
}

/// Bytes of a stream, from its opener, at an offset.
public struct StreamChunk: Hashable, Sendable {
    /// The stream, as numbered by its opener.
    public var id: UInt32
    /// Offset of the first byte in the stream.
    public var offset: UInt64
    /// At most `Wire.maxChunkLength` bytes.
    public var bytes: [UInt8]

    /// Creates a chunk.
    @inlinable
    public init(id: UInt32, offset: UInt64, bytes: [UInt8]) {
        self.id = id
        self.offset = offset
        self.bytes = bytes
    }
}

/// The receiver's flow control of a stream: where the opener's bytes go on, and how far it may send.
public struct StreamCredit: Hashable, Sendable {
    /// The stream, as numbered by its opener.
    public var id: UInt32
    /// Bytes the receiver holds: the first credit of a resumed resource starts the opener's chunks here.
    public var received: UInt64
    /// The opener may send bytes below this offset; it only grows.
    public var limit: UInt64

    /// Creates a credit.
    @inlinable
    public init(id: UInt32, received: UInt64, limit: UInt64) {
        self.id = id
        self.received = received
        self.limit = limit
    }
}

/// Ends a stream, from either side.
public struct StreamEnd: Hashable, Sendable {
    /// The stream, as numbered by its opener.
    public var id: UInt32
    /// Whether the sender of this `streamEnd` opened the stream (false: the receiver of this message did).
    public var fromOpener: Bool
    /// How it ended.
    public var status: StreamStatus
    /// SHA-256 of a finished resource's bytes (`Wire.digestLength`), or empty.
    public var digest: [UInt8]
    /// Why, for people; at most `Wire.maxStreamReasonLength` bytes of UTF-8.
    public var reason: String

    /// Creates a stream end.
    @inlinable
    public init(id: UInt32, fromOpener: Bool, status: StreamStatus, digest: [UInt8] = [], reason: String = "") {
        self.id = id
        self.fromOpener = fromOpener
        self.status = status
        self.digest = digest
        self.reason = reason
    }
}
