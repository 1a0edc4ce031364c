/// An application's durable message (kind `durableData`, `0x36`): its payload, kept on the sender's disk until the
/// receiver acknowledged it, and numbered by the sender with an id that only grows, across the sender's restarts, so
/// that the receiver takes each once (docs/wire-format.md, section 10.5).
public struct DurableData: Hashable, Sendable {
    /// The sender's number for the message, from 1, growing by one per message across its restarts.
    public var id: UInt64
    /// The application's bytes, at most `Wire.maxDataLength`.
    public var bytes: [UInt8]

    /// Creates a durable message numbered `id`.
    @inlinable
    public init(id: UInt64, bytes: [UInt8]) {
        self.id = id
        self.bytes = bytes
    }
}
