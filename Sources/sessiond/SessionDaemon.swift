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
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("\(errorPrefix)sessiond: \(error)\n".utf8))
            Foundation.exit(error.exitStatus)
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

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let configuration = try DaemonConfiguration(
            options: self, environment: environment, uid: getuid(), hostName: ProcessInfo.processInfo.hostName)
        let insecure = configuration.isInsecure
        LoggingSystem.bootstrap { label in
            DaemonLogHandler(label: label, level: configuration.logLevel, insecure: insecure)
        }
        let logger = Logger(label: "sessiond")
        Self.raiseDescriptorLimit(logger: logger)
        do {
            try await Self.serve(configuration, logger: logger)
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

    /// Opens what `configuration` asks for, then runs it as one group of services until SIGTERM or SIGINT.
    private static func serve(_ configuration: DaemonConfiguration, logger: Logger) async throws {
        // Before anything is joined, bound or advertised: a second daemon on the same socket stops here.
        try ControlServer.checkUnused(path: configuration.controlPath)
        let state = try loadState(configuration, logger: logger)
        // Avahi first: without it (and without --no-discovery) there is nothing to start. Over LE alone, discovery is
        // LE advertising and scanning (LEDiscovery), without Avahi.
        let operatorLog = OperatorLog(logger: logger)
        let avahi: AvahiConnection? =
            configuration.lanDiscovery
            ? try await AvahiConnection.connect(logger: logger) { operatorLog.record($0) } : nil
        let (session, app, transports, port) = try await startSession(configuration, state: state, logger: logger)
        let desk = StreamDesk(session: session, logger: logger)
        let hub = EventHub(loop: loop) { event in  // the operator's log and the stream desk first, on the loop
            operatorLog.record(event)
            if case .session(.streamOpened(let stream)) = event { desk.take(stream) }
        }
        hub.attach(session: session, app: app)
        let (pageLocation, bluetooth) = (PageLocation(), BluetoothState())
        let dispatcher = ControlDispatcher(
            session: session, app: app, hub: hub, desk: desk, page: pageLocation, bluetooth: bluetooth, logger: logger)
        var page: PageServer?
        let control: ControlServer
        do {
            if let address = configuration.page {
                page = try await servePage(
                    on: address, in: configuration, feed: PageFeed(dispatcher: dispatcher, hub: hub),
                    location: pageLocation, logger: logger)
            }
            control = try await serveControl(configuration, dispatcher: dispatcher, logger: logger)
        } catch {
            await session.stop()
            throw error
        }
        announce(configuration, session: session, port: port, logger: logger)

        // Shut down in reverse order: the control socket and the advertisement go first, then the session says bye
        // to every peer, the hub ends with the session's events, and the byte streams still read end.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: desk), .init(service: hub, successTerminationBehavior: .ignore), .init(service: session),
        ]
        if let avahi {
            let discovery = SessionDiscovery(
                session: session, serviceType: configuration.serviceType, connection: avahi, logger: logger
            ) { operatorLog.record($0) }
            services.append(.init(service: discovery))
        }
        services += bluetoothServices(
            configuration, on: transports, session: session, app: app, state: bluetooth, operatorLog: operatorLog,
            logger: logger)
        if let page { services.append(.init(service: page)) }
        services.append(.init(service: MemoryTrimmer(logger: logger)))
        services.append(.init(service: control))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("stopped")
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
