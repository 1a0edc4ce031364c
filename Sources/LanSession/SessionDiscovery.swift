import AvahiDiscovery
import Logging
import WireCodec

/// Advertises a session with DNS-SD through avahi-daemon and feeds what it browses to the session.
///
/// Every node advertises and browses at once; whoever discovers first dials, and the session's tie-break keeps one
/// link. Browsing never waits for the advertisement: a node whose own registration is slow or stuck still finds and
/// dials its peers. Its own advertisement, other sessions and other protocol versions are ignored.
public final class SessionDiscovery: Sendable {
    private let session: Session
    private let serviceType: String
    private let registrationTimeout: Duration
    private let logger: Logger

    /// Creates the discovery of `session`, for services of `serviceType`. A registration that is not established
    /// within `registrationTimeout` is withdrawn and made again.
    public init(
        session: Session, serviceType: String = ServiceDescription.defaultType,
        registrationTimeout: Duration = .seconds(5), logger: Logger
    ) {
        self.session = session
        self.serviceType = serviceType
        self.registrationTimeout = registrationTimeout
        self.logger = logger
    }

    /// Connects to avahi-daemon; fails at once with a clear error when it is not there.
    public func connect() async throws(AvahiError) -> AvahiConnection {
        try await AvahiConnection.connect(logger: logger)
    }

    /// Publishes the session and browses, side by side, until cancelled; withdraws the advertisement when it ends.
    public func run(on connection: AvahiConnection) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.advertise(on: connection) }
            group.addTask { await self.browse(on: connection) }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Registers the advertisement and keeps it until cancelled.
    private func advertise(on connection: AvahiConnection) async throws {
        let configuration = session.configuration
        let port = await session.port
        let record = DiscoveryRecord(
            peerID: configuration.peerID, sessionName: configuration.sessionName,
            datagramPort: configuration.datagrams ? UInt16(port) : 0, displayName: configuration.displayName)
        let publication = try await connection.register(
            ServiceDescription(name: configuration.displayName, type: serviceType, port: UInt16(port), txt: record.txt),
            registrationTimeout: registrationTimeout)
        if let name = try? await publication.established() {
            logger.info("advertising as \"\(name)\" (\(serviceType), port \(port))")
        }
        // The registration lives (and is renewed when it has to be) until cancelled.
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        await publication.withdraw()
    }

    /// Feeds every record of the session's peers to the session until cancelled.
    private func browse(on connection: AvahiConnection) async {
        let configuration = session.configuration
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
                    try? await session.vanished(record: service.name)  // it may have named a peer before
                    continue
                }
                let endpoints = service.endpoints
                logger.debug("discovered \(service.name) (\(found.peerID)) at \(endpoints)")
                try? await session.discovered(
                    endpoints, peerID: found.peerID, name: found.displayName, record: service.name)
            case .removed(let name, _, _):
                logger.debug("\(name) no longer advertised")
                try? await session.vanished(record: name)
            case .allForNow:
                break
            case .failure(let error):
                logger.warning("discovery: \(error)")
            }
        }
    }
}
