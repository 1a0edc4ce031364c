import WireCodec

/// Multipeer sessions over pluggable transports.
///
/// This module is a placeholder: it has no API yet beyond re-exporting the wire format's version. Sessions, links and
/// channels arrive in a later release.
public enum LanSession {
    /// The wire protocol version sessions will speak.
    public static let protocolVersion = Wire.protocolVersion
}
