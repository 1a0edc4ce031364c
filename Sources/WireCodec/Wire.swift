/// Constants of the LanSession wire format, version 3.
///
/// `docs/wire-format.md` is the normative description; every number here appears there by name.
public enum Wire {
    /// The protocol version this codec speaks, carried in `hello`.
    @inlinable public static var protocolVersion: UInt32 { 3 }

    /// Largest stream frame body (kind byte and fields) accepted by default, in bytes.
    @inlinable public static var defaultMaxFrameLength: Int { 64 * 1024 }

    /// Largest frame body limit a ``WireLimits`` may be configured with, in bytes.
    ///
    /// Its varint length header fits in ``maxFrameHeaderLength`` bytes.
    @inlinable public static var absoluteMaxFrameLength: Int { 16 * 1024 * 1024 }

    /// Longest stream frame header (the varint body length), in bytes.
    @inlinable public static var maxFrameHeaderLength: Int { 4 }

    /// Largest UDP payload (datagram header and every frame in it), in bytes.
    @inlinable public static var maxDatagramLength: Int { 1200 }

    /// Length of the fixed part of the datagram header (the link token), in bytes.
    @inlinable public static var linkTokenLength: Int { 8 }

    /// Longest display name or session name (and the original apps' handshake peer name), in UTF-8 bytes.
    @inlinable public static var maxNameLength: Int { 63 }

    /// Longest invitation context, in bytes.
    @inlinable public static var maxInvitationContextLength: Int { 1024 }

    /// Longest padding of a `ping` or `pong`, in bytes.
    @inlinable public static var maxPingPayloadLength: Int { 1024 }

    /// Most extensions in a `hello`.
    @inlinable public static var maxHelloExtensions: Int { 8 }

    /// Longest value of one `hello` extension, in bytes.
    @inlinable public static var maxHelloExtensionLength: Int { 255 }

    /// Most ciphers in a `hello`'s cipher list (extension 3); a longer list is malformed.
    @inlinable public static var maxHelloCiphers: Int { 8 }

    /// Most members in a `members` message.
    @inlinable public static var maxMembers: Int { 64 }

    /// Most endpoints of one member in a `members` message.
    @inlinable public static var maxMemberEndpoints: Int { 4 }

    /// Longest transport name in an endpoint, in UTF-8 bytes.
    @inlinable public static var maxTransportNameLength: Int { 15 }

    /// Longest host in an endpoint (an address, or a name), in UTF-8 bytes.
    @inlinable public static var maxHostLength: Int { 63 }

    /// Longest Noise handshake message in a `noise` frame, in bytes.
    @inlinable public static var maxNoiseMessageLength: Int { 4096 }

    /// Length of a public key (X25519 or Ed25519), in bytes.
    @inlinable public static var publicKeyLength: Int { 32 }

    /// Length of an Ed25519 signature, in bytes.
    @inlinable public static var signatureLength: Int { 64 }

    /// Most statements in a `trust` message.
    @inlinable public static var maxTrustStatements: Int { 64 }

    /// Most statements in a handshake payload.
    @inlinable public static var maxHandshakeStatements: Int { 8 }

    /// What a trust statement's signature covers first.
    public static let statementLabel = "LanSession v3 statement"

    /// Largest plaintext of one sealed record on a stream, in bytes.
    @inlinable public static var maxRecordPlaintext: Int { 16 * 1024 }

    /// Length of the authentication tag of a sealed record or datagram (ChaCha20-Poly1305 or AES-256-GCM), in bytes.
    @inlinable public static var sealTagLength: Int { 16 }

    /// Largest payload of one `data` message on the reliable channel, in bytes.
    @inlinable public static var maxDataLength: Int { 60 * 1024 }

    /// Largest payload of one `data` message sent as a datagram, in bytes: it fits a datagram with its headers.
    @inlinable public static var maxUnreliableDataLength: Int { 1024 }

    /// Largest payload of one `streamChunk`, in bytes.
    @inlinable public static var maxChunkLength: Int { 60 * 1024 }

    /// Longest stream or resource name in `streamOpen`, in UTF-8 bytes.
    @inlinable public static var maxStreamNameLength: Int { 255 }

    /// Longest reason in `streamEnd`, in UTF-8 bytes.
    @inlinable public static var maxStreamReasonLength: Int { 255 }

    /// Length of a resource's resume key in `streamOpen`, in bytes.
    @inlinable public static var resumeKeyLength: Int { 16 }

    /// Length of a resource's digest in `streamEnd` (SHA-256), in bytes.
    @inlinable public static var digestLength: Int { 32 }
}
