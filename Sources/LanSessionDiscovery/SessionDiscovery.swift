import AvahiDiscovery
@_spi(Diagnostics) import LanSession
import Logging
import ServiceLifecycle
import Synchronization
import WireCodec

/// Advertises a session with DNS-SD through avahi-daemon and feeds what it browses to the session.
///
/// Every node advertises and browses at once; whoever discovers first dials, and the session's tie-break keeps one
/// link. Browsing never waits for the advertisement: a node whose own registration is slow or stuck still finds and
/// dials its peers. Other sessions and other protocol versions are ignored; its own advertisement is watched: when
/// the node's own browser has not seen it for `registrationTimeout` twice over, although Avahi reports it
/// established, it is registered again (avahi-daemon 0.8 can leave a service unannounced after an interface flap).
///
/// It is a `Service` of swift-service-lifecycle: in a `ServiceGroup`, ``run()`` advertises and browses until the
/// group's graceful shutdown; ``run(on:)`` does until cancelled, on a connection of the caller's.
public final class SessionDiscovery: Service {
    private let session: Session
    /// The connection ``run()`` uses; nil: it connects.
    private let connection: AvahiConnection?
    private let serviceType: String
    private let registrationTimeout: Duration
    private let logger: Logger
    private let report: @Sendable (DiscoveryNotice) -> Void
    /// Whether this node's browser sees its own advertisement, and since when it has not.
    private let ownSighting = Mutex<(seen: Bool, missingSince: ContinuousClock.Instant)>((false, .now))
    /// Which advertisements to resolve, and when.
    private let schedule = Mutex(ResolveSchedule(now: .now))

    /// Creates the discovery of `session`, for services of `serviceType`. A registration that is not established
    /// within `registrationTimeout` is withdrawn and made again. What an operator may want to know goes to `report`
    /// (the discovery itself logs at debug). ``run()`` uses `connection` when given (and closes it as it ends),
    /// otherwise connects to avahi-daemon itself.
    public init(
        session: Session, serviceType: String = ServiceDescription.defaultType,
        registrationTimeout: Duration = .seconds(5), connection: AvahiConnection? = nil,
        logger: Logger = Logger(label: "lansession.discovery"),
        report: @escaping @Sendable (DiscoveryNotice) -> Void = { _ in }
    ) {
        self.session = session
        self.connection = connection
        self.serviceType = serviceType
        self.registrationTimeout = registrationTimeout
        self.logger = logger
        self.report = report
    }

    /// Connects to avahi-daemon; fails at once with a clear error when it is not there.
    public func connect() async throws(AvahiError) -> AvahiConnection {
        try await AvahiConnection.connect(logger: logger)
    }

    /// Publishes the session and browses, side by side, until graceful shutdown (in a `ServiceGroup`) or cancellation,
    /// on the connection it was given or one it makes; withdraws the advertisement and closes the connection as it
    /// ends.
    public func run() async throws {
        let connection: AvahiConnection
        if let given = self.connection {
            connection = given
        } else {
            connection = try await connect()
        }
        do {
            try await cancelWhenGracefulShutdown { try await self.run(on: connection) }
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
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
        let bluetooth = await session.listeningEndpoints.first { $0.transport == DiscoveryRecord.bluetoothTransport }
        var record = DiscoveryRecord(
            peerID: configuration.peerID, sessionName: configuration.sessionName,
            datagramPort: configuration.datagrams ? UInt16(port) : 0, displayName: configuration.displayName,
            bluetooth: bluetooth)
        if configuration.isInsecure {
            record.admission = "none"
        } else {
            record.admission = configuration.secret != nil ? "psk" : configuration.admission.description
            record.fingerprint = configuration.identity.fingerprint
        }
        // RFC 6762 section 8.1 asks for a random 0-250 ms before the first probe, so that hosts started together do
        // not probe together; there are no probes here, but the same delay spreads their announcements, and the
        // avahi-daemons of a 16-host start then spend half the CPU (the delay is not on a join's path: a newcomer
        // dials the peers it resolves, it is not waiting to be found).
        try? await Task.sleep(for: .milliseconds(Int.random(in: 0...250)))
        guard !Task.isCancelled else { return }
        let publication = try await connection.register(
            ServiceDescription(
                name: record.instanceName, type: serviceType, port: UInt16(port), txt: record.txt, isNameUnique: true),
            registrationTimeout: registrationTimeout)
        if let name = try? await publication.established() {
            logger.debug("advertising as \"\(name)\"", metadata: ["type": "\(serviceType)", "port": "\(port)"])
        }
        // The registration lives until cancelled, renewed when it went missing from the network: at first after
        // twice the registration timeout, after three renewals that did not help only once a minute.
        var renewals = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            let missing = ownSighting.withLock { $0.seen ? Duration.zero : .now - $0.missingSince }
            if missing == .zero { renewals = 0 }
            let patience = renewals < 3 ? registrationTimeout * 2 : .seconds(60)
            guard missing > patience, publication.isEstablished else { continue }
            ownSighting.withLock { $0.missingSince = .now }
            renewals += 1
            if renewals == 3 {
                logger.debug("\(DiscoveryNotice.ownAdvertisementMissing)")
                report(.ownAdvertisementMissing)
            }
            await publication.renew(because: "not seen on the network for \(missing)")
        }
        await publication.withdraw()
    }

    /// Feeds every record of the session's peers to the session until cancelled.
    ///
    /// Advertisements are resolved as ``ResolveSchedule`` says: a few at once, then only those of peers this node
    /// cannot reach otherwise (the others' endpoints come in `members` from the peers it is connected to). Each is
    /// resolved once: a daemon's TXT record and port do not change while it runs (a restart withdraws and registers
    /// again, which is resolved anew), and resolvers left running would keep querying.
    private func browse(on connection: AvahiConnection) async {
        schedule.withLock { $0 = ResolveSchedule(now: .now) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // The schedule is asked again when something waiting may have come due: its next check is here, or
                // a peer's connection state changed (a connected peer lost is to be resolved after a grace). In a
                // settled mesh neither happens, and the ticks stay off the session's loop.
                var changesSeen = UInt64.max
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(200))
                    let changes = self.session.peerStateChangeCount
                    let due = self.schedule.withLock { $0.nextCheck.map { $0 <= .now } ?? false }
                    guard due || changes != changesSeen else { continue }
                    changesSeen = changes
                    await self.resolveDue(on: connection)
                }
            }
            await follow(
                connection.browse(type: serviceType, followingChanges: false, resolvingOnRequest: true),
                on: connection)
            group.cancelAll()
        }
    }

    /// Starts the resolves that are due.
    private func resolveDue(on connection: AvahiConnection) async {
        let peers = schedule.withLock { $0.waiting.isEmpty ? nil : $0.waitingPeers }
        guard let peers else { return }
        let reach = peers.isEmpty ? [:] : ((try? await session.reach(of: peers)) ?? [:])
        let names = schedule.withLock { $0.due(now: ContinuousClock.now) { reach[$0] ?? .unknown } }
        for name in names {
            logger.trace("resolving \(name)")
            connection.resolve(name, type: serviceType)
        }
    }

    private func follow(
        _ events: AsyncStream<BrowseEvent>, on connection: AvahiConnection
    ) async {
        let configuration = session.configuration
        var ownNames: Set<String> = []
        for await event in events {
            if Task.isCancelled { break }
            switch event {
            case .sighted(let name, _, _, let interfaces):
                let peer = DiscoveryRecord.peerID(fromInstanceName: name)
                if peer == configuration.peerID {
                    ownSighting.withLock { $0.seen = true }
                    ownNames.insert(name)
                    continue
                }
                schedule.withLock { $0.sighted(name, peer: peer, interfaces: interfaces, now: .now) }
                await resolveDue(on: connection)
            case .found(let service):
                guard let found = DiscoveryRecord(txt: service.txt) else {
                    logger.debug("ignoring \(service.name): no LanSession TXT record")
                    continue
                }
                if found.peerID == configuration.peerID {
                    ownSighting.withLock { $0.seen = true }
                    ownNames.insert(service.name)
                    continue
                }
                if let reason = found.reasonToIgnore(
                    localPeer: configuration.peerID, sessionName: configuration.sessionName,
                    hasSecret: configuration.secret != nil, insecure: configuration.isInsecure)
                {
                    logger.debug("ignoring \(service.name): \(reason)")
                    try? await session.vanished(record: service.name)  // it may have named a peer before
                    continue
                }
                let endpoints = service.endpoints + (found.bluetooth.map { [$0] } ?? [])
                logger.debug("discovered \(service.name) (\(found.peerID)) at \(endpoints)")
                try? await session.discovered(
                    endpoints, peerID: found.peerID, name: found.displayName, record: service.name)
            case .removed(let name, _, _):
                logger.debug("\(name) no longer advertised")
                schedule.withLock { $0.removed(name) }
                if ownNames.remove(name) != nil && ownNames.isEmpty {
                    ownSighting.withLock { $0 = (false, .now) }
                }
                try? await session.vanished(record: name)
            case .allForNow:
                break
            case .failure(let error):
                logger.debug("discovery: \(error)")
                report(.browsingFailed(error))
            }
        }
    }
}
