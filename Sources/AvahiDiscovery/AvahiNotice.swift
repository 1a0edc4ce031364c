/// Something about the connection to avahi-daemon an operator may want to know: the module logs only at debug, and
/// hands these to the `report` given to ``AvahiConnection/connect(logger:report:)``, which decides what is shown.
public enum AvahiNotice: Sendable, CustomStringConvertible {
    /// avahi-daemon went away; the connection comes back when it does.
    case daemonLost
    /// avahi-daemon's host name collided with another host's; it picks another.
    case hostNameCollision
    /// A service name collided; it is published under `newName`.
    case serviceRenamed(from: String, to: String, reason: String)
    /// A service is registered again (it went missing from the network, or was not established in time).
    case registeringAgain(String, reason: String)
    /// An advertisement could not be resolved.
    case cannotResolve(String, reason: String)
    /// Something failed for good: the connection, a publication, a browser.
    case failed(AvahiError)
    /// Avahi reported a state or an event this module does not know.
    case unexpected(String)

    public var description: String {
        switch self {
        case .daemonLost: "lost avahi-daemon; reconnecting when it returns"
        case .hostNameCollision: "avahi-daemon's host name collided; waiting for it to pick another"
        case .serviceRenamed(let old, let new, let reason):
            "service name \(old) collided (\(reason)); renaming to \(new)"
        case .registeringAgain(let name, let reason): "\(name) \(reason); registering it again"
        case .cannotResolve(let name, let reason): "cannot resolve \(name): \(reason)"
        case .failed(let error): "\(error)"
        case .unexpected(let what): what
        }
    }
}
