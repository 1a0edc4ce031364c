import AvahiDiscovery

/// Something about a session's discovery an operator may want to know: ``SessionDiscovery`` logs only at debug, and
/// hands these to the `report` it was made with.
public enum DiscoveryNotice: Sendable, CustomStringConvertible {
    /// avahi-daemon does not resolve this node's own advertisement although it reports it established (its host
    /// name record can stay stuck after an interface went down and up): peers that know this node still reach it, new
    /// ones may not until avahi-daemon restarts.
    case ownAdvertisementMissing
    /// Browsing for the session's peers failed.
    case browsingFailed(AvahiError)

    public var description: String {
        switch self {
        case .ownAdvertisementMissing:
            "avahi-daemon does not resolve this node's own advertisement although it reports it established (its host "
                + "name record can stay stuck after an interface went down and up); peers that know this node still "
                + "reach it, new ones may not until avahi-daemon restarts"
        case .browsingFailed(let error): "discovery: \(error)"
        }
    }
}
