import ArgumentParser
import AvahiDiscovery
import BubblesAndCounter
import Foundation
@_spi(Diagnostics) import LanSession
import LanSessionDiscovery
import LanSessionLE
import LanSessionRFCOMM
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SessionControl
import WireCodec

/// The LanSession daemon: joins a session on the LAN and serves the local control socket.
@main
struct SessionDaemon: AsyncParsableCommand {
    /// The environment variable that limits the ciphers this device offers (``SessionConfiguration/ciphers``).
    static let ciphersVariable = "LANSESSION_CIPHERS"

    static let configuration = CommandConfiguration(
        commandName: "sessiond",
        abstract: "Join a LanSession session on the LAN and serve session-client on a local control socket.",
        discussion: """
            Advertises and browses with DNS-SD through avahi-daemon, and over Bluetooth LE with --transport le or all \
            (or only dials --peer addresses with --no-discovery), keeps a reliable (TCP) and an unreliable (UDP) channel to every peer, and stops \
            gracefully on SIGTERM or SIGINT.

            Links are sealed with AES-256-GCM when both sides offer it, with ChaCha20-Poly1305 otherwise. A device \
            offers AES-256-GCM first where its CPU has AES instructions, then ChaCha20-Poly1305; the environment \
            variable LANSESSION_CIPHERS (a comma-separated list of aesgcm and chachapoly, in order of preference) \
            limits what it offers. A peer that takes neither cipher the other offers is refused.

            As a service (the Debian package): lansession.service runs sessiond as the system user lansession, with \
            --control /run/lansession/sessiond.sock, --state-dir /var/lib/lansession and the options in \
            /etc/default/lansession (SESSIOND_OPTS); restart it after a change (systemctl restart lansession). Its \
            lines go to the journal at their levels (journalctl -u lansession -p notice). The unit allows no Bluetooth \
            socket: the drop-in /usr/share/lansession/bluetooth.conf, linked into \
            /etc/systemd/system/lansession.service.d/, adds the Bluetooth address family and CAP_NET_ADMIN (which LE \
            discovery needs) and nothing more; then choose --transport all in SESSIOND_OPTS.
            """,
        version: LanSessionVersion.current
    )

    @Option(help: "Display name of this peer (default: the host name).") var name: String?
    @Option(help: "Session to join.") var session = "default"
    @Option(help: "DNS-SD service type.") var serviceType = ServiceDescription.defaultType
    @Option(parsing: .unconditional, help: "TCP port, and UDP port of the same number (0...65535; 0: any free port).")
    var port = CommandLineNumber(0)
    @Option(help: "Address to listen on.") var listen = "0.0.0.0"
    @Option(parsing: .unconditional, help: "Most peers besides this one (1...64).") var maxPeers = CommandLineNumber(8)
    @Option(name: .customLong("peer"), help: "A peer to dial at HOST:PORT (repeatable).") var peers: [String] = []
    @Flag(help: "Neither DNS-SD (avahi-daemon) nor LE advertising: only --peer addresses are dialled.")
    var noDiscovery = false
    @Option(help: "Answer invitations automatically (auto) or through session-client (ask).") var accept = "auto"
    @Option(help: "Control socket path.") var control: String?
    @Option(help: "Directory for the device key, the trusted devices and the counter.") var stateDir: String?
    @Option(
        help: ArgumentHelp(
            "Directory where files pushed by peers land (default: inbox in the state directory).", valueName: "dir"))
    var inbox: String?
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds a member may be away before what waits for it fails: data waiting for room, transfers both ways (0...86400; 0: wait for as long as it is a member).",
            valueName: "seconds"))
    var deliveryTimeout = CommandLineNumber(300)
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Days after their last write when partial files of abandoned transfers leave the inbox (0...3650; 0: never).",
            valueName: "days"))
    var partialFileDays = CommandLineNumber(7)
    @Option(
        name: .customLong("http"),
        help: ArgumentHelp(
            "Serve the page for people on [ADDR:]PORT (ADDR defaults to 127.0.0.1; off without this option). `session-client web` prints its address with the token.",
            valueName: "[addr:]port"))
    var http: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "info"
    @Option(
        help: "Transports: lan, rfcomm (Bluetooth classic), le (Bluetooth Low Energy, L2CAP), a list (lan,le) or all.")
    var transport = TransportChoice.lanOnly
    @Option(help: "Bluetooth adapter for RFCOMM, e.g. hci0 (default: the first adapter).") var btAdapter: String?
    @Option(parsing: .unconditional, help: "RFCOMM channel to listen on (1...30).") var btChannel = CommandLineNumber(5)
    @Option(name: .customLong("bt-peer"), help: "A peer to dial over RFCOMM at ADDRESS[/CHANNEL] (repeatable).")
    var btPeers: [String] = []
    @Option(
        name: .customLong("le-psm"), parsing: .unconditional,
        help: "LE L2CAP PSM to listen on (128...255, a dynamic LE PSM; default 197).")
    var lePSM = CommandLineNumber(L2CAPTransport.defaultPSM)
    @Option(name: .customLong("le-peer"), help: "A peer to dial over LE L2CAP at ADDRESS[/PSM] (repeatable).")
    var lePeers: [String] = []
    @Option(
        help: ArgumentHelp(
            "File with the session's secret (mode 0600): only peers with the same secret get in, and links are encrypted.",
            valueName: "path"))
    var secretFile: String?
    @Option(
        help: ArgumentHelp(
            "Who gets in: paired (devices paired here or introduced by a member), secret (holders of --secret-file) or open (anyone; still encrypted). Default: secret with --secret-file, paired otherwise."
        ))
    var admission: AdmissionChoice?
    @Flag(
        help: "No handshake and no encryption, for measuring what they cost; implies --admission open. Never for use.")
    var insecure = false

    /// Who gets in.
    enum AdmissionChoice: String, ExpressibleByArgument, CaseIterable {
        case paired
        case secret
        case open
    }

    /// Which transports the daemon runs: `lan`, `rfcomm`, `le`, a list of them (`lan,le`), or `all`, where a machine
    /// without Bluetooth carries on with the LAN.
    struct TransportChoice: ExpressibleByArgument, Equatable {
        var lan = false
        var rfcomm = false
        var le = false
        var all = false

        init?(argument: String) {
            for name in argument.split(separator: ",", omittingEmptySubsequences: false) {
                switch name {
                case "lan": lan = true
                case "rfcomm": rfcomm = true
                case "le": le = true
                case "all": (lan, rfcomm, le, all) = (true, true, true, true)
                default: return nil
                }
            }
            guard lan || rfcomm || le else { return nil }
        }

        static let lanOnly = TransportChoice(argument: "lan")!
        static var allValueStrings: [String] { ["lan", "rfcomm", "le", "all"] }
        var defaultValueDescription: String { "lan" }
    }

    /// Bad arguments: one line, exit 2 (not the parser's usual 64).
    static func main() async {
        runOnOneLoop()
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                exit(withError: error)  // --help, --version
            }
            let message = message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            FileHandle.standardError.write(Data("\(errorPrefix)sessiond: \(message)\n".utf8))
            Foundation.exit(error is ValidationError || code == .validationFailure ? 2 : code.rawValue)
        }
    }

    func validate() throws {
        if let control, control.isEmpty { throw ValidationError("--control needs a non-empty path") }
        if let stateDir, stateDir.isEmpty { throw ValidationError("--state-dir needs a non-empty path") }
        try maxPeers.validated("--max-peers", in: 1...64)
        try port.validated("--port", in: 0...65_535)
        try deliveryTimeout.validated("--delivery-timeout", in: 0...86_400)
        if let http, Self.pageAddress(http) == nil {
            throw ValidationError("--http \(http) is not [ADDR:]PORT (PORT 0...65535)")
        }
        try partialFileDays.validated("--partial-file-days", in: 0...3_650)
        guard accept == "auto" || accept == "ask" else { throw ValidationError("--accept must be auto or ask") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be trace, debug, info, notice, warning, error or critical")
        }
        for peer in peers where Endpoint(parsing: peer) == nil {
            throw ValidationError("--peer \(peer) is not HOST:PORT")
        }
        let btChannel = try btChannel.validated("--bt-channel", in: RFCOMMTransport.channels)
        for peer in btPeers where Self.bluetoothEndpoint(peer, defaultChannel: btChannel) == nil {
            throw ValidationError("--bt-peer \(peer) is not ADDRESS[/CHANNEL] (AA:BB:CC:DD:EE:FF, channel 1...30)")
        }
        let lePSM = try lePSM.validated("--le-psm", in: L2CAPTransport.psms)
        for peer in lePeers where Self.leEndpoint(peer, defaultPSM: lePSM) == nil {
            throw ValidationError("--le-peer \(peer) is not ADDRESS[/PSM] (AA:BB:CC:DD:EE:FF, PSM 128...255)")
        }
        if !transport.lan && !transport.le && !noDiscovery {
            throw ValidationError(
                "--transport rfcomm needs --no-discovery (DNS-SD runs on the LAN; use all for both, or le to discover over LE)"
            )
        }
        switch (admission, secretFile != nil) {
        case (.secret, false): throw ValidationError("--admission secret needs --secret-file")
        case (.paired, true), (.open, true):
            throw ValidationError("--secret-file goes with --admission secret only")
        default: break
        }
        if insecure && (secretFile != nil || (admission != nil && admission != .open)) {
            throw ValidationError("--insecure admits anyone: it goes with --admission open only")
        }
        if noDiscovery && peers.isEmpty {
            // Allowed: other daemons may dial this one.
        }
        let displayName = name ?? ProcessInfo.processInfo.hostName
        guard !displayName.isEmpty, displayName.utf8.count <= Wire.maxNameLength else {
            throw ValidationError("--name must be 1...\(Wire.maxNameLength) UTF-8 bytes")
        }
        guard session.utf8.count <= Wire.maxNameLength else {
            throw ValidationError("--session must be at most \(Wire.maxNameLength) UTF-8 bytes")
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let insecure = self.insecure
        LoggingSystem.bootstrap { label in DaemonLogHandler(label: label, level: level, insecure: insecure) }
        let logger = Logger(label: "sessiond")
        Self.raiseDescriptorLimit(logger: logger)
        do {
            try await serve(logger: logger)
        } catch let error as AvahiError where error.code == .daemonNotRunning {
            Self.fail("\(error.message); or run without discovery: sessiond --no-discovery --peer HOST:PORT")
        } catch let error as DaemonError {
            Self.fail(error.description)
        } catch let error as StateError {
            Self.fail("state file \(error.description)")
        } catch let error as SessionError {
            Self.fail(error.message)
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("\(errorPrefix)sessiond: \(message)\n".utf8))
        Foundation.exit(1)
    }

    /// A line that ends the daemon is an error in the journal (`journalctl -p err`), as the log's errors are.
    static var errorPrefix: String {
        DaemonLogHandler.stderrIsJournal() ? "<\(DaemonLogHandler.syslogPriority(.error))>" : ""
    }

    private func serve(logger: Logger) async throws {
        let (port, maxPeers, btChannel) = (port.value(or: 0), maxPeers.value(or: 8), btChannel.value(or: 5))
        let lePSM = lePSM.value(or: L2CAPTransport.defaultPSM)
        let environment = ProcessInfo.processInfo.environment
        let uid = getuid()
        let controlPath = control ?? ControlSocket.defaultPath(environment: environment, uid: uid)
        // Before anything is joined, bound or advertised: a second daemon on the same socket stops here.
        try ControlServer.checkUnused(path: controlPath)
        let stateDirectory = stateDir ?? Self.defaultStateDirectory(environment, uid)
        try StateStore.checkDirectory(stateDirectory, option: stateDir == nil ? nil : "--state-dir")
        let store = StateStore(directory: URL(fileURLWithPath: stateDirectory))
        let secret = try secretFile.map { path throws(DaemonError) in try SecretFile.load(path) }
        let identity = try store.load()
        let peerID = identity.peerID
        if identity.isNew {
            logger.info("new device \(peerID) (\(identity.device.fingerprint)) in \(store.directory.path)")
        }

        // Avahi first: without it (and without --no-discovery) there is nothing to start. Over LE alone, discovery is
        // LE advertising and scanning (LEDiscovery), without Avahi.
        let operatorLog = OperatorLog(logger: logger)
        let avahi: AvahiConnection? =
            noDiscovery || !transport.lan
            ? nil : try await AvahiConnection.connect(logger: logger) { operatorLog.record($0) }

        var configuration = SessionConfiguration(
            peerID: peerID, displayName: name ?? ProcessInfo.processInfo.hostName, sessionName: session,
            host: listen, port: port, maxPeers: maxPeers, invitationPolicy: accept == "ask" ? .ask : .acceptAll)
        configuration.identity = identity.device
        configuration.peerID = identity.peerID
        if insecure {
            configuration.isInsecure = true
            configuration.admission = .open
            logger.warning("insecure: links are neither authenticated nor encrypted; for measuring only")
        } else if let secret {
            configuration.admission = .secret(secret)
        } else {
            configuration.admission = admission == .open ? .open : .paired
        }
        if let ciphers = environment[Self.ciphersVariable] {
            guard let offered = NoiseCipher.list(parsing: ciphers) else {
                throw DaemonError(
                    "\(Self.ciphersVariable)=\(ciphers) is not a comma-separated list of chachapoly and aesgcm")
            }
            configuration.ciphers = offered
        }
        configuration.trustedDevicesFile = store.trustedDevicesFile.path
        // Byte streams are taken while a client listens (`streams`, see StreamDesk), declined otherwise; files go to
        // the inbox.
        configuration.acceptsByteStreams = false
        let inboxPath = inbox ?? store.directory.appendingPathComponent("inbox").path
        do {
            try FileManager.default.createDirectory(
                atPath: inboxPath, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DaemonError("cannot use the inbox \(inboxPath): \(error.localizedDescription)")
        }
        configuration.inbox = inboxPath
        let delivery = deliveryTimeout.value(or: 300)
        configuration.deliveryTimeout = delivery == 0 ? nil : .seconds(delivery)
        let days = partialFileDays.value(or: 7)
        configuration.partialFileLifetime = days == 0 ? nil : .seconds(days * 24 * 3600)
        if let secret, secret.count < 16 {
            logger.warning(
                "the secret is \(secret.count) bytes: an attacker who completes one handshake can try guesses offline; use 32 random bytes (head -c 32 /dev/urandom | base64)"
            )
        }
        configuration.transportPriority = [LANTransport.name, RFCOMMTransport.name, L2CAPTransport.name]
        let transports = try makeTransports(btChannel: btChannel, lePSM: lePSM, logger: logger)
        let session = try Session(
            configuration: configuration, transports: transports, eventLoop: Self.loop, logger: logger)
        // The original apps; this peer's count is saved before it is sent: a failed save counts nowhere.
        let app = try await BubblesAndCounterApp(
            session: session,
            configuration: BubblesAndCounterApp.Configuration(
                initialCounts: [peerID: identity.localCount], localCountStore: store))
        let boundPort: Int
        do {
            boundPort = try await session.start()
        } catch {
            await session.stop()
            let where_ = transports.map { $0.name == LANTransport.name ? "\(listen):\(port)" : $0.name }
            throw DaemonError("cannot listen on \(where_.joined(separator: " and ")): \(error)")
        }
        for peer in peers { try await session.connect(to: Endpoint(parsing: peer)!) }
        try await dialBluetoothPeers(of: session, on: transports, btChannel: btChannel, lePSM: lePSM, logger: logger)

        let desk = StreamDesk(session: session, logger: logger)
        let hub = EventHub(loop: Self.loop) { event in  // the operator's log and the stream desk first, on the loop
            operatorLog.record(event)
            if case .session(.streamOpened(let stream)) = event { desk.take(stream) }
        }
        hub.attach(session: session, app: app)
        let pageLocation = PageLocation()
        let bluetooth = BluetoothState()
        let dispatcher = ControlDispatcher(
            session: session, app: app, hub: hub, desk: desk, page: pageLocation, bluetooth: bluetooth, logger: logger)
        var page: PageServer?
        if let http, let (host, port) = Self.pageAddress(http) {
            do {
                let token = try PageToken.load(in: stateDirectory)
                let server = try await PageServer.bind(
                    host: host, port: port, token: token, feed: PageFeed(dispatcher: dispatcher, hub: hub),
                    logger: logger)
                let bound = server.address.port ?? port
                let shown = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host.contains(":") ? "[\(host)]" : host
                pageLocation.set(url: "http://\(shown):\(bound)/?token=\(token.value)", listening: "\(host):\(bound)")
                page = server
                if !["127.0.0.1", "::1", "localhost"].contains(host) {
                    logger.warning(
                        "the page listens on \(host):\(bound), not only on this machine: whoever reaches it with the token sees the session and acts in it\(session.configuration.admission == .open ? "; admission is open, so anyone on the network may join too" : "")"
                    )
                }
                logger.info("page on http://\(shown):\(bound)/ (session-client web prints the address with its token)")
            } catch {
                await session.stop()
                throw DaemonError("cannot serve the page on \(host):\(port): \(error)")
            }
        }
        let control: ControlServer
        do {
            control = try await ControlServer.bind(path: controlPath, dispatcher: dispatcher, logger: logger)
        } catch {
            await session.stop()
            throw DaemonError("cannot serve the control socket \(controlPath): \(error)")
        }
        logger.info(
            "peer \(peerID) \"\(session.configuration.displayName)\" (\(session.fingerprint)) in session \"\(session.configuration.sessionName)\" on port \(boundPort), admission \(insecure ? "open, INSECURE" : session.configuration.admission.description); control socket \(controlPath)"
        )
        // Said once the daemon serves: a start that fails says one line, its reason.
        let offered = session.configuration.ciphers.map(\.name).joined(separator: ", ")
        let source = environment[Self.ciphersVariable] == nil ? "this CPU's default" : Self.ciphersVariable
        logger.info("links offer \(offered) (\(source))")

        // Shut down in reverse order: the control socket and the advertisement go first, then the session says bye
        // to every peer, the event pump ends with the session's events, and the byte streams still read end.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: desk),
            .init(service: EventPumpService(hub: hub), successTerminationBehavior: .ignore),
            .init(service: session),
        ]
        if let avahi {
            services.append(
                .init(
                    service: DiscoveryService(
                        discovery: SessionDiscovery(
                            session: session, serviceType: serviceType, logger: logger
                        ) { operatorLog.record($0) },
                        connection: avahi)))
        }
        services += bluetoothServices(
            on: transports, session: session, app: app, state: bluetooth, operatorLog: operatorLog, logger: logger)
        if let page { services.append(.init(service: PageService(server: page))) }
        services.append(.init(service: ControlService(server: control)))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("stopped")
    }

    /// `[ADDR:]PORT` of --http (`[::1]:8080` for IPv6): the address (127.0.0.1 by default) and port.
    static func pageAddress(_ text: String) -> (host: String, port: Int)? {
        var host = "127.0.0.1"
        var portText = Substring(text)
        if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { return nil }
        }
        guard let port = Int(portText), (0...65_535).contains(port) else { return nil }
        return (host, port)
    }

    /// Raises the soft limit on open descriptors to the hard one (at most 65,536): systemd and shells start
    /// processes at 1,024, which a burst of connections can use up.
    static func raiseDescriptorLimit(logger: Logger) {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return }
        let wanted = min(limit.rlim_max, 65_536)
        guard limit.rlim_cur < wanted else { return }
        let before = limit.rlim_cur
        limit.rlim_cur = wanted
        if setrlimit(resource, &limit) == 0 {
            logger.debug("descriptor limit raised from \(before) to \(wanted)")
        }
    }

    static func defaultStateDirectory(_ environment: [String: String], _ uid: UInt32) -> String {
        if uid == 0 { return "/var/lib/lansession" }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/lansession" }
        return (environment["HOME"] ?? "/tmp") + "/.local/state/lansession"
    }
}
