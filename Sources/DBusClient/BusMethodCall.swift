/// A method call that reached an object this side exports.
public struct BusMethodCall: Sendable {
    /// The object's path.
    public var path: String
    /// The interface named by the call (nil when the caller named none).
    public var interface: String?
    /// The method.
    public var member: String
    /// The arguments, in order.
    public var arguments: [BusValue]
    /// The caller's unique bus name (`:1.42`), when the bus told.
    public var sender: String?

    public init(path: String, interface: String?, member: String, arguments: [BusValue], sender: String? = nil) {
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.sender = sender
    }
}

/// How an exported object answers a ``BusMethodCall``.
public enum BusReply: Sendable, Equatable {
    /// A method return with these values (none for a method that returns nothing).
    case values([BusValue])
    /// An error reply: its D-Bus name (`org.bluez.Error.Failed`) and a sentence.
    case error(name: String, message: String)
    /// No such method or object here: the bus library answers with D-Bus's own "unknown method" error.
    case unknown

    /// A method return with no values.
    public static let empty = BusReply.values([])
}

/// A signal that reached a match of ``BusConnection/signals(sender:path:interface:member:)``.
public struct BusSignal: Sendable {
    /// The emitting object's path.
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [BusValue]
    /// The emitter's unique bus name (`:1.42`).
    public var sender: String?
}
