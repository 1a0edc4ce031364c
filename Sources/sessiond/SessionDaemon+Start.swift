import BubblesAndCounter
import Foundation
import LanSession
import Logging

/// The steps of a start that open something (the state directory, the session's sockets, the page's and the control
/// socket), each failing with one line that says what it could not do.
extension SessionDaemon {
    /// What the state directory and the secret file hold.
    struct StoredState {
        let store: StateStore
        let identity: StateStore.Identity
        let secret: [UInt8]?
    }

    /// Reads the device's identity (made on a first start) and the session's secret, and makes the inbox.
    static func loadState(_ configuration: DaemonConfiguration, logger: Logger) throws -> StoredState {
        let directory = configuration.stateDirectory
        try StateStore.checkDirectory(directory, option: configuration.stateDirectoryGiven ? "--state-dir" : nil)
        let store = StateStore(directory: URL(fileURLWithPath: directory))
        var secret: [UInt8]?
        if case .secret(let file) = configuration.admission { secret = try SecretFile.load(file) }
        let identity = try store.load()
        if identity.isNew {
            logger.info("new device \(identity.peerID) (\(identity.device.fingerprint)) in \(store.directory.path)")
        }
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.inbox, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw DaemonError("cannot use the inbox \(configuration.inbox): \(error.localizedDescription)")
        }
        if configuration.isInsecure {
            logger.warning("insecure: links are neither authenticated nor encrypted; for measuring only")
        }
        if let secret, secret.count < 16 {
            logger.warning(
                "the secret is \(secret.count) bytes: an attacker who completes one handshake can try guesses offline; use 32 random bytes (head -c 32 /dev/urandom | base64)"
            )
        }
        return StoredState(store: store, identity: identity, secret: secret)
    }

    /// The session on its transports, listening and dialling its peers, with the original apps; the port it listens
    /// on.
    static func startSession(
        _ configuration: DaemonConfiguration, state: StoredState, logger: Logger
    ) async throws -> (Session, BubblesAndCounterApp, [any Transport], port: Int) {
        let transports = try makeTransports(configuration.transports, logger: logger)
        let session = try Session(
            configuration: configuration.sessionConfiguration(
                identity: state.identity.device, secret: state.secret,
                trustedDevicesFile: state.store.trustedDevicesFile.path, membersFile: state.store.membersFile.path,
                durableDirectory: state.store.directory.path),
            transports: transports, eventLoop: loop, logger: logger)
        // The original apps; this peer's count is saved before it is sent: a failed save counts nowhere.
        let app = try await BubblesAndCounterApp(
            session: session,
            configuration: BubblesAndCounterApp.Configuration(
                initialCounts: [state.identity.peerID: state.identity.localCount], localCountStore: state.store))
        let port: Int
        do {
            port = try await session.start()
        } catch {
            await session.stop()
            let where_ = transports.map {
                $0.name == LANTransport.name ? "\(configuration.listen):\(configuration.port)" : $0.name
            }
            throw DaemonError("cannot listen on \(where_.joined(separator: " and ")): \(error)")
        }
        for peer in configuration.peers { try await session.connect(to: peer) }
        try await dialBluetoothPeers(configuration, of: session, on: transports, logger: logger)
        return (session, app, transports, port)
    }

    /// The page on `address`, its location told to `location`.
    static func servePage(
        on address: DaemonConfiguration.PageAddress, in configuration: DaemonConfiguration, feed: PageFeed,
        location: PageLocation, logger: Logger
    ) async throws -> PageServer {
        let (host, port) = (address.host, address.port)
        do {
            let token = try PageToken.load(in: configuration.stateDirectory)
            let server = try await PageServer.bind(host: host, port: port, token: token, feed: feed, logger: logger)
            let bound = server.address.port ?? port
            let shown = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host.contains(":") ? "[\(host)]" : host
            location.set(url: "http://\(shown):\(bound)/?token=\(token.value)", listening: "\(host):\(bound)")
            if !["127.0.0.1", "::1", "localhost"].contains(host) {
                let open = configuration.admission == .open || configuration.isInsecure
                logger.warning(
                    "the page listens on \(host):\(bound), not only on this machine: whoever reaches it with the token sees the session and acts in it\(open ? "; admission is open, so anyone on the network may join too" : "")"
                )
            }
            logger.info("page on http://\(shown):\(bound)/ (session-client web prints the address with its token)")
            return server
        } catch {
            throw DaemonError("cannot serve the page on \(host):\(port): \(error)")
        }
    }

    /// The control socket, served by `dispatcher`.
    static func serveControl(
        _ configuration: DaemonConfiguration, dispatcher: ControlDispatcher, logger: Logger
    ) async throws -> ControlServer {
        do {
            return try await ControlServer.bind(
                path: configuration.controlPath, dispatcher: dispatcher, logger: logger)
        } catch {
            throw DaemonError("cannot serve the control socket \(configuration.controlPath): \(error)")
        }
    }

    /// Said once the daemon serves: a start that fails says one line, its reason.
    static func announce(
        _ configuration: DaemonConfiguration, session: Session, port: Int, logger: Logger
    ) {
        let admission =
            configuration.isInsecure ? "open, INSECURE" : session.configuration.admission.description
        logger.info(
            "peer \(session.peerID) \"\(configuration.displayName)\" (\(session.fingerprint)) in session \"\(configuration.sessionName)\" on port \(port), admission \(admission); control socket \(configuration.controlPath)"
        )
        let offered = session.configuration.ciphers.map(\.name).joined(separator: ", ")
        let source = configuration.ciphers == nil ? "this CPU's default" : ciphersVariable
        logger.info("links offer \(offered) (\(source))")
    }
}
