import CSystemdBus

#if canImport(Glibc)
    import Glibc
#endif

/// An error of the D-Bus client: a failure of sd-bus (with its errno), or an error a peer on the bus replied with
/// (with its D-Bus error name).
public struct BusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: Hashable, Sendable {
        /// No bus to connect to: the socket is missing or refused (the D-Bus daemon is not running).
        case noBus
        /// A call sd-bus refused or that failed locally (the errno says why).
        case failed
        /// The peer replied with a D-Bus error (``BusError/name`` says which).
        case replied
        /// A message did not hold what its signature or the caller said.
        case badMessage
        /// The connection was closed, or lost.
        case closed
    }

    /// What kind of failure this is.
    public var code: Code
    /// The errno sd-bus returned (positive), or 0.
    public var errno: Int32
    /// The D-Bus error name of a reply (`org.freedesktop.DBus.Error.ServiceUnknown`, `org.bluez.Error.Failed`…), or nil.
    public var name: String?
    /// A sentence for people, with sd-bus's or the peer's text.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, errno: Int32 = 0, name: String? = nil, message: String) {
        self.code = code
        self.errno = errno
        self.name = name
        self.message = message
    }

    /// The error for the negative errno `result` that an sd-bus call returned while doing `operation`.
    init(result: Int32, _ operation: String) {
        let number = -result
        let text = String(cString: strerror(number))
        let code: Code =
            switch number {
            case ENOENT, ECONNREFUSED: .noBus
            case ENOTCONN, ECONNRESET, EPIPE: .closed
            case EBADMSG, ENXIO: .badMessage
            default: .failed
            }
        self.init(code, errno: number, message: "\(operation): \(text) (errno \(number))")
    }

    public var description: String { message }
}
