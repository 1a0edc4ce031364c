/// Constants of the LanSession wire format, version 1.
///
/// `docs/wire-format.md` is the normative description; every number here appears there by name.
public enum Wire {
    /// The protocol version this codec speaks, carried in `hello`.
    public static let protocolVersion: UInt32 = 1

    /// Largest stream frame body (kind byte and fields) accepted by default, in bytes.
    public static let defaultMaxFrameLength = 64 * 1024

    /// Largest frame body limit a ``WireLimits`` may be configured with, in bytes.
    ///
    /// Its varint length header fits in ``maxFrameHeaderLength`` bytes.
    public static let absoluteMaxFrameLength = 16 * 1024 * 1024

    /// Longest stream frame header (the varint body length), in bytes.
    public static let maxFrameHeaderLength = 4

    /// Largest UDP payload (datagram header and every frame in it), in bytes.
    public static let maxDatagramLength = 1200

    /// Length of the fixed part of the datagram header (the link token), in bytes.
    public static let linkTokenLength = 8

    /// Longest display name, session name or handshake peer name, in UTF-8 bytes.
    public static let maxNameLength = 63

    /// Longest invitation context, in bytes.
    public static let maxInvitationContextLength = 1024

    /// Most entries in a `layout` or `counterState` list.
    public static let maxListEntries = 128

    /// Most extensions in a `hello`.
    public static let maxHelloExtensions = 8

    /// Longest value of one `hello` extension, in bytes.
    public static let maxHelloExtensionLength = 255

    /// Smallest `counterIncrement` delta.
    public static let minIncrementDelta: UInt16 = 1

    /// Largest `counterIncrement` delta: the largest value whose varint takes two bytes.
    public static let maxIncrementDelta: UInt16 = 16_383
}
