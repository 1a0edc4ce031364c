import CAvahi

/// An error from the Avahi daemon or from this wrapper, with Avahi's own text.
public struct AvahiError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: Hashable, Sendable {
        /// avahi-daemon (or the system D-Bus it is reached through) is not running.
        case daemonNotRunning
        /// The connection to avahi-daemon was lost.
        case disconnected
        /// A name could not be registered and no alternative was found.
        case collision
        /// Avahi refused an argument (a service type, name or TXT entry).
        case invalidArgument
        /// The connection was closed by its owner.
        case closed
        /// Any other failure reported by Avahi.
        case failure
    }

    /// What kind of failure this is.
    public var code: Code
    /// Avahi's error number (`AVAHI_ERR_*`, negative), or 0 when the error is this wrapper's own.
    public var avahiErrno: Int32
    /// A sentence for people: what failed, Avahi's text, and the fix when there is one.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, avahiErrno: Int32 = 0, message: String) {
        self.code = code
        self.avahiErrno = avahiErrno
        self.message = message
    }

    /// An error for `errno` returned by an Avahi call, describing `operation`.
    init(avahiErrno: Int32, operation: String) {
        let text = String(cString: avahi_strerror(avahiErrno))
        switch Int(avahiErrno) {
        case AVAHI_ERR_NO_DAEMON, AVAHI_ERR_DBUS_ERROR:
            self.init(
                .daemonNotRunning, avahiErrno: avahiErrno,
                message: "\(operation): avahi-daemon is not running or not reachable over the system D-Bus (\(text)); "
                    + "start it, for example with `systemctl start avahi-daemon`")
        case AVAHI_ERR_DISCONNECTED:
            self.init(.disconnected, avahiErrno: avahiErrno, message: "\(operation): lost avahi-daemon (\(text))")
        case AVAHI_ERR_COLLISION:
            self.init(.collision, avahiErrno: avahiErrno, message: "\(operation): \(text)")
        case AVAHI_ERR_INVALID_SERVICE_NAME, AVAHI_ERR_INVALID_SERVICE_TYPE, AVAHI_ERR_INVALID_DOMAIN_NAME,
            AVAHI_ERR_INVALID_PORT, AVAHI_ERR_INVALID_RECORD, AVAHI_ERR_INVALID_ARGUMENT, AVAHI_ERR_INVALID_HOST_NAME:
            self.init(.invalidArgument, avahiErrno: avahiErrno, message: "\(operation): \(text)")
        default:
            self.init(.failure, avahiErrno: avahiErrno, message: "\(operation): \(text)")
        }
    }

    public var description: String { message }
}
