import AvahiDiscovery
import Logging
import WireCodec

/// Advertises a session with DNS-SD through avahi-daemon and feeds what it browses to the session.
///
/// Every node advertises and browses at once; whoever discovers first dials, and the session's tie-break keeps one
/// link. Its own advertisement, other sessions and other protocol versions are ignored.
public final class SessionDiscovery: Sendable {
    private let session: Session
    private let serviceType: String
    private let logger: Logger

    /// Creates the discovery of `session`, for services of `serviceType`.
    public init(session: Session, serviceType: String = ServiceDescription.defaultType, logger: Logger) {
        self.session = session
        self.serviceType = serviceType
        self.logger = logger
    }

    /// Connects to avahi-daemon; fails at once with a clear error when it is not there.
    public func connect() async throws(AvahiError) -> AvahiConnection {
        try await AvahiConnection.connect(logger: logger)
    }

    /// Publishes the session and browses until cancelled; withdraws the advertisement when it ends.
    public func run(on connection: AvahiConnection) async throws {
        let configuration = session.configuration
        let port = await session.port
        let record = DiscoveryRecord(
            peerID: configuration.peerID, sessionName: configuration.sessionName,
            datagramPort: configuration.datagrams ? UInt16(port) : 0, displayName: configuration.displayName)
        let publication = try await connection.publish(
            ServiceDescription(name: configuration.displayName, type: serviceType, port: UInt16(port), txt: record.txt))
        logger.info("advertising as \"\(publication.name)\" (\(serviceType), port \(port))")
        defer { Task { await publication.withdraw() } }
        var peersByName: [String: PeerID] = [:]
        for await event in connection.browse(type: serviceType) {
            if Task.isCancelled { break }
            switch event {
            case .found(let service):
                guard let found = DiscoveryRecord(txt: service.txt) else {
                    logger.debug("ignoring \(service.name): no LanSession TXT record")
                    continue
                }
                if let reason = found.reasonToIgnore(
                    localPeer: configuration.peerID, sessionName: configuration.sessionName)
                {
                    logger.debug("ignoring \(service.name): \(reason)")
                    continue
                }
                guard let endpoint = service.endpoint else { continue }
                peersByName[service.name] = found.peerID
                logger.debug("discovered \(service.name) (\(found.peerID)) at \(endpoint)")
                try? await session.discovered(endpoint, peerID: found.peerID, name: found.displayName)
            case .removed(let name, _, _):
                if let id = peersByName.removeValue(forKey: name) {
                    logger.debug("\(name) (\(id)) no longer advertised")
                    try? await session.vanished(id)
                }
            case .allForNow:
                break
            case .failure(let error):
                logger.warning("discovery: \(error)")
            }
        }
        await publication.withdraw()
    }
}
