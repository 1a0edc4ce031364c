/// A message of an application the receiver runs (kind `0x35`): the application's number and its bytes, which only
/// that application reads. See docs/wire-format.md, section 10.4.
public struct AppMessage: Hashable, Sendable {
    /// The application's number, `1...255`: applications that talk to each other use the same number, and a session
    /// runs at most one application per number. 0 is not a number.
    public var app: UInt8
    /// The application's bytes, at most `Wire.maxDataLength` (`Wire.maxUnreliableDataLength` in a datagram).
    public var bytes: [UInt8]

    /// Creates a message for application `app`.
    @inlinable
    public init(app: UInt8, bytes: [UInt8]) {
        self.app = app
        self.bytes = bytes
    }
}
