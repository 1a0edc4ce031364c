import CAvahi
import Glibc
import Logging

/// One running browse: an Avahi service browser, a resolver per instance, interface and protocol, and the merged view
/// reported on the stream.
///
/// Every property is guarded by the connection's lock.
final class BrowserState: @unchecked Sendable {
    /// An instance on one interface and protocol.
    struct Sighting: Hashable {
        var interface: AvahiIfIndex
        var `protocol`: AvahiProtocol
    }

    /// An instance across all its sightings.
    struct InstanceKey: Hashable {
        var name: String
        var type: String
        var domain: String
    }

    struct Resolution {
        var hostName: String
        var port: UInt16
        var address: ServiceAddress
        var txt: [String: String]
    }

    struct Instance {
        /// Where the browser sees the instance now.
        var sightings: Set<Sighting> = []
        var resolvers: [Sighting: OpaquePointer] = [:]
        var resolutions: [Sighting: Resolution] = [:]
        var isLocal = false
        var isOwn = false
        var lastReported: DiscoveredService?
        /// With resolving on request: whether it was asked for (its sightings are resolved as they come).
        var requested = false

        /// The distinct interfaces it is seen on.
        var interfaceCount: Int { Set(sightings.map(\.interface)).count }
    }

    private unowned let connection: AvahiConnection
    let type: String
    let domain: String?
    /// Resolvers stay and report changes (TXT updates, new addresses); otherwise each is freed after its first answer.
    let followsChanges: Bool
    /// An instance is only reported as sighted until ``resolve(name:domain:)`` asks for it.
    let resolvesOnRequest: Bool
    private let continuation: AsyncStream<BrowseEvent>.Continuation
    private var browser: OpaquePointer?
    private var instances: [InstanceKey: Instance] = [:]
    /// Instances known before a daemon restart, removed unless seen again before the next all-for-now.
    private var stale: Set<InstanceKey> = []
    private var finished = false

    init(
        connection: AvahiConnection, type: String, domain: String?, followsChanges: Bool, resolvesOnRequest: Bool,
        continuation: AsyncStream<BrowseEvent>.Continuation
    ) {
        self.connection = connection
        self.type = type
        self.domain = domain
        self.followsChanges = followsChanges
        self.resolvesOnRequest = resolvesOnRequest
        self.continuation = continuation
    }

    /// Starts the Avahi browser if it is not running.
    func start(with client: OpaquePointer) {
        guard !finished, browser == nil else { return }
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        browser = avahi_service_browser_new(
            client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), type, domain,
            AvahiLookupFlags(0), serviceBrowserCallback, userdata)
        if browser == nil {
            let error = AvahiError(avahiErrno: avahi_client_errno(client), operation: "browsing for \(type)")
            connection.logger.debug("\(error)")
            continuation.yield(.failure(error))
        }
    }

    /// The client is gone and with it every Avahi object of this browser.
    func connectionLost(_ error: AvahiError) {
        guard !finished else { return }
        browser = nil
        for key in instances.keys { stale.insert(key) }
        for key in instances.keys {
            instances[key]?.resolvers = [:]
            instances[key]?.sightings = []
        }
        continuation.yield(.failure(error))
    }

    /// Frees the Avahi objects and ends the stream.
    func finish() {
        guard !finished else { return }
        finished = true
        for instance in instances.values {
            for resolver in instance.resolvers.values { avahi_service_resolver_free(resolver) }
        }
        instances = [:]
        if let browser { avahi_service_browser_free(browser) }
        browser = nil
        continuation.finish()
    }

    fileprivate func browserEvent(
        _ browser: OpaquePointer, _ interface: AvahiIfIndex, _ protocol: AvahiProtocol, _ event: AvahiBrowserEvent,
        _ name: String?, _ type: String?, _ domain: String?, _ flags: AvahiLookupResultFlags
    ) {
        guard !finished, browser == self.browser else { return }
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let type, let domain else { return }
            let key = InstanceKey(name: name, type: type, domain: domain)
            let sighting = Sighting(interface: interface, protocol: `protocol`)
            stale.remove(key)
            var instance = instances[key] ?? Instance()
            let interfacesBefore = instances[key] == nil ? 0 : instance.interfaceCount
            instance.isLocal = instance.isLocal || flags.rawValue & AVAHI_LOOKUP_RESULT_LOCAL.rawValue != 0
            instance.isOwn = instance.isOwn || flags.rawValue & AVAHI_LOOKUP_RESULT_OUR_OWN.rawValue != 0
            instance.sightings.insert(sighting)
            instances[key] = instance
            if resolvesOnRequest && !instance.requested {
                if instance.interfaceCount > interfacesBefore {
                    continuation.yield(
                        .sighted(name: name, type: type, domain: domain, interfaces: instance.interfaceCount))
                }
            } else {
                startResolver(key, sighting)
            }
        case AVAHI_BROWSER_REMOVE:
            guard let name, let type, let domain else { return }
            let key = InstanceKey(name: name, type: type, domain: domain)
            let sighting = Sighting(interface: interface, protocol: `protocol`)
            guard var instance = instances[key] else { return }
            if let resolver = instance.resolvers.removeValue(forKey: sighting) { avahi_service_resolver_free(resolver) }
            instance.resolutions[sighting] = nil
            instance.sightings.remove(sighting)
            if instance.sightings.isEmpty {
                instances[key] = nil
                if instance.lastReported != nil || resolvesOnRequest {  // reported as found, or as sighted
                    continuation.yield(.removed(name: name, type: type, domain: domain))
                }
            } else {
                instances[key] = instance
                report(key)
            }
        case AVAHI_BROWSER_ALL_FOR_NOW:
            for key in stale where instances[key]?.sightings.isEmpty ?? true {
                let reported = instances[key]?.lastReported != nil || resolvesOnRequest
                instances[key] = nil
                if reported { continuation.yield(.removed(name: key.name, type: key.type, domain: key.domain)) }
            }
            stale = []
            continuation.yield(.allForNow)
        case AVAHI_BROWSER_CACHE_EXHAUSTED:
            break
        case AVAHI_BROWSER_FAILURE:
            let client = avahi_service_browser_get_client(browser)
            let code = client.map { avahi_client_errno($0) } ?? Int32(AVAHI_ERR_FAILURE)
            continuation.yield(.failure(AvahiError(avahiErrno: code, operation: "browsing for \(self.type)")))
        default:
            connection.notify(.unexpected("service browser reported unknown event \(event.rawValue)"))
        }
    }

    /// Resolves `key` where it is sighted and not resolved yet.
    private func startResolver(_ key: InstanceKey, _ sighting: Sighting) {
        guard let browser, let client = avahi_service_browser_get_client(browser), var instance = instances[key],
            instance.resolvers[sighting] == nil, followsChanges || instance.resolutions[sighting] == nil
        else { return }
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        if let resolver = avahi_service_resolver_new(
            client, sighting.interface, sighting.protocol, key.name, key.type, key.domain,
            AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiLookupFlags(0), serviceResolverCallback, userdata)
        {
            instance.resolvers[sighting] = resolver
            instances[key] = instance
        } else {
            connection.notify(
                .cannotResolve(key.name, reason: String(cString: avahi_strerror(avahi_client_errno(client)))))
        }
    }

    /// Resolves the instance `name` where it is sighted, now and from now on.
    func resolve(name: String, domain: String?) {
        guard !finished else { return }
        for key in instances.keys where key.name == name && (domain == nil || key.domain == domain) {
            instances[key]?.requested = true
            for sighting in instances[key]?.sightings ?? [] { startResolver(key, sighting) }
        }
    }

    fileprivate func resolverEvent(
        _ interface: AvahiIfIndex, _ protocol: AvahiProtocol, _ event: AvahiResolverEvent, _ name: String,
        _ type: String, _ domain: String, _ hostName: String?, _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16,
        _ txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        guard !finished else { return }
        let key = InstanceKey(name: name, type: type, domain: domain)
        let sighting = Sighting(interface: interface, protocol: `protocol`)
        guard instances[key]?.resolvers[sighting] != nil else { return }
        switch event {
        case AVAHI_RESOLVER_FOUND:
            guard let address else { return }
            var text = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
            avahi_address_snprint(&text, text.count, address)
            var interfaceName = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
            let resolvedInterface = if_indextoname(UInt32(bitPattern: interface), &interfaceName) != nil
            let serviceAddress = ServiceAddress(
                address: Self.string(fromNulTerminated: text),
                family: address.pointee.proto == AvahiProtocol(AVAHI_PROTO_INET6) ? .ipv6 : .ipv4,
                interfaceIndex: interface,
                interfaceName: resolvedInterface ? Self.string(fromNulTerminated: interfaceName) : "\(interface)")
            instances[key]?.resolutions[sighting] = Resolution(
                hostName: hostName ?? "", port: port, address: serviceAddress, txt: TXTRecord.dictionary(txt))
            if !followsChanges, let resolver = instances[key]?.resolvers.removeValue(forKey: sighting) {
                // Avahi allows freeing a resolver in its own callback; its record browsers stop querying with it.
                avahi_service_resolver_free(resolver)
            }
            report(key)
        case AVAHI_RESOLVER_FAILURE:
            connection.logger.debug("resolving \(name) on interface \(interface) failed; waiting for the next answer")
        default:
            connection.notify(.unexpected("service resolver reported unknown event \(event.rawValue)"))
        }
    }

    private static func string(fromNulTerminated buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Yields the instance's merged view if it changed.
    private func report(_ key: InstanceKey) {
        guard let instance = instances[key] else { return }
        let resolutions = instance.resolutions.values.sorted {
            ($0.address.interfaceIndex, $0.address.address) < ($1.address.interfaceIndex, $1.address.address)
        }
        guard let latest = resolutions.last else { return }
        let service = DiscoveredService(
            name: key.name, type: key.type, domain: key.domain, hostName: latest.hostName, port: latest.port,
            addresses: resolutions.map(\.address), txt: latest.txt, isLocal: instance.isLocal, isOwn: instance.isOwn)
        guard service != instance.lastReported else { return }
        instances[key]?.lastReported = service
        continuation.yield(.found(service))
    }
}

extension AvahiConnection {
    /// Browses for services of `type`, resolving each instance on every interface and protocol it appears on.
    ///
    /// With `followingChanges` (the default) each resolver stays and reports a changed TXT record or address. Without,
    /// a resolver is freed after its first answer and an instance is resolved again only after it went away and came
    /// back: a resolver keeps querying for its SRV, TXT and address records (at 1, 2, 4, 8… s), and on a link with
    /// many instances those queries, times every browser, are most of the avahi-daemons' work.
    ///
    /// With `resolvingOnRequest` an instance is reported as ``BrowseEvent/sighted(name:type:domain:interfaces:)``
    /// (again when it shows up on another interface) and resolved only once ``resolve(_:type:domain:)`` asks for it:
    /// a resolve costs queries that every avahi-daemon on the link handles, and a consumer that can tell from the
    /// name that it already reaches the instance need not resolve it.
    ///
    /// The stream runs until the consumer stops iterating or the connection closes.
    public func browse(
        type: String = ServiceDescription.defaultType, domain: String? = nil, followingChanges: Bool = true,
        resolvingOnRequest: Bool = false
    ) -> AsyncStream<BrowseEvent> {
        let (stream, continuation) = AsyncStream<BrowseEvent>.makeStream(bufferingPolicy: .unbounded)
        let state = BrowserState(
            connection: self, type: type, domain: domain, followsChanges: followingChanges,
            resolvesOnRequest: resolvingOnRequest, continuation: continuation)
        continuation.onTermination = { [weak self] _ in
            // May run on Avahi's thread (lock held): hop to the queue before taking the lock.
            guard let self else { return }
            self.queue.async {
                self.locked {
                    state.finish()
                    self.remove(state)
                }
            }
        }
        queue.async {
            self.locked {
                guard !self.isClosed else {
                    state.finish()
                    return
                }
                self.add(state)
                if let client = self.runningClient { state.start(with: client) }
            }
        }
        return stream
    }

    /// Resolves the instance `name` of `type` for every browse of that type that resolves on request: where it is
    /// sighted now and wherever it shows up later. Reported as ``BrowseEvent/found(_:)`` on those browses.
    public func resolve(_ name: String, type: String = ServiceDescription.defaultType, domain: String? = nil) {
        queue.async {
            self.locked {
                for browser in self.browsers.values where browser.type == type && browser.resolvesOnRequest {
                    browser.resolve(name: name, domain: domain)
                }
            }
        }
    }
}

private let serviceBrowserCallback: AvahiServiceBrowserCallback = {
    browser, interface, proto, event, name, type, domain, flags, userdata in
    guard let browser, let userdata else { return }
    Unmanaged<BrowserState>.fromOpaque(userdata).takeUnretainedValue().browserEvent(
        browser, interface, proto, event, name.map { String(cString: $0) }, type.map { String(cString: $0) },
        domain.map { String(cString: $0) }, flags)
}

private let serviceResolverCallback: AvahiServiceResolverCallback = {
    _, interface, proto, event, name, type, domain, hostName, address, port, txt, _, userdata in
    guard let userdata, let name, let type, let domain else { return }
    Unmanaged<BrowserState>.fromOpaque(userdata).takeUnretainedValue().resolverEvent(
        interface, proto, event, String(cString: name), String(cString: type), String(cString: domain),
        hostName.map { String(cString: $0) }, address, port, txt)
}
