/// Receiver-side limits applied while decoding.
public struct WireLimits: Hashable, Sendable {
    /// Largest frame body accepted, in bytes. A frame announcing more is refused before its body is buffered.
    public let maxFrameLength: Int

    /// The limits used when none are given: 64 KiB frames.
    @inlinable
    public static var `default`: WireLimits { WireLimits() }

    /// Creates limits; `maxFrameLength` must be in `1...Wire.absoluteMaxFrameLength`.
    @inlinable
    public init(maxFrameLength: Int = Wire.defaultMaxFrameLength) {
        precondition(
            (1...Wire.absoluteMaxFrameLength).contains(maxFrameLength),
            "maxFrameLength must be in 1...\(Wire.absoluteMaxFrameLength), got \(maxFrameLength)"
        )
        self.maxFrameLength = maxFrameLength
    }
}
