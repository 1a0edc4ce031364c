/// A resolved service instance: everything needed to connect to it.
public struct DiscoveredService: Hashable, Sendable {
    /// The instance name, e.g. "alice".
    public var name: String
    /// The service type, e.g. "_lansession._tcp".
    public var type: String
    /// The domain, usually "local".
    public var domain: String
    /// The publishing host's name, e.g. "host-1.local".
    public var hostName: String
    /// The port.
    public var port: UInt16
    /// Every address the instance was resolved to, one per interface and protocol it was seen on.
    public var addresses: [ServiceAddress]
    /// The TXT record.
    public var txt: [String: String]
    /// Whether this machine's avahi-daemon announced it (it may still be another process's).
    public var isLocal: Bool
    /// Whether the same Avahi connection published it.
    public var isOwn: Bool

    /// Creates a description.
    public init(
        name: String, type: String, domain: String, hostName: String, port: UInt16, addresses: [ServiceAddress],
        txt: [String: String], isLocal: Bool = false, isOwn: Bool = false
    ) {
        self.name = name
        self.type = type
        self.domain = domain
        self.hostName = hostName
        self.port = port
        self.addresses = addresses
        self.txt = txt
        self.isLocal = isLocal
        self.isOwn = isOwn
    }
}

/// One address of a resolved service.
public struct ServiceAddress: Hashable, Sendable, CustomStringConvertible {
    /// IPv4 or IPv6.
    public enum Family: Hashable, Sendable {
        case ipv4
        case ipv6
    }

    /// The address in text form, e.g. "10.77.0.2" or "fe80::1".
    public var address: String
    /// The family of `address`.
    public var family: Family
    /// The interface index it was seen on.
    public var interfaceIndex: Int32
    /// The interface name it was seen on, e.g. "eth0".
    public var interfaceName: String

    /// Creates an address.
    public init(address: String, family: Family, interfaceIndex: Int32, interfaceName: String) {
        self.address = address
        self.family = family
        self.interfaceIndex = interfaceIndex
        self.interfaceName = interfaceName
    }

    /// The address, with "%interface" for IPv6 link-local addresses.
    public var description: String {
        family == .ipv6 && address.lowercased().hasPrefix("fe80:") ? "\(address)%\(interfaceName)" : address
    }
}

/// What a browser reports.
public enum BrowseEvent: Hashable, Sendable {
    /// An instance was resolved, or changed (another address, a new TXT record, a new port): the full current view.
    case found(DiscoveredService)
    /// With resolving on request: an instance was seen, on `interfaces` distinct interfaces so far; not resolved yet.
    case sighted(name: String, type: String, domain: String, interfaces: Int)
    /// An instance disappeared from every interface and protocol.
    case removed(name: String, type: String, domain: String)
    /// Every instance already cached has been reported.
    case allForNow
    /// Browsing failed; after `disconnected` the browser resumes by itself when avahi-daemon returns.
    case failure(AvahiError)
}

/// What to publish.
public struct ServiceDescription: Hashable, Sendable {
    /// The instance name to ask for; the published name may differ after a collision.
    public var name: String
    /// The service type.
    public var type: String
    /// The port.
    public var port: UInt16
    /// The TXT record.
    public var txt: [String: String]
    /// The name is known to be unique on the link, so Avahi announces the service at once instead of probing for its
    /// name first: RFC 6762 probing holds a registration back 0.75–1 s, and every peer that starts at the same time
    /// waits that long to be found. Without probes Avahi sees no conflict at all (it announces its records again over
    /// a conflicting answer), so this is only for names that carry an identity the application already relies on being
    /// unique, such as a random peer id.
    public var isNameUnique: Bool

    /// The type LanSession daemons use.
    public static let defaultType = "_lansession._tcp"

    /// Creates a description.
    public init(
        name: String, type: String = ServiceDescription.defaultType, port: UInt16, txt: [String: String] = [:],
        isNameUnique: Bool = false
    ) {
        self.name = name
        self.type = type
        self.port = port
        self.txt = txt
        self.isNameUnique = isNameUnique
    }
}
