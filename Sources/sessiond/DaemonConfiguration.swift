import Foundation
@_spi(Diagnostics) import LanSession
import LanSessionLE
import LanSessionRFCOMM
import Logging
import SessionControl
import WireCodec

/// What the daemon runs, made from its options alone: ``init(options:environment:uid:hostName:)`` reads nothing but its
/// arguments, so that every option and every bad combination of them is checked before anything is opened, and each
/// in a unit test. What the daemon reads from disk (its identity, the secret) completes it in
/// ``sessionConfiguration(identity:secret:trustedDevicesFile:)``.
struct DaemonConfiguration: Sendable {
    /// Who gets in.
    enum Admission: Equatable, Sendable {
        case paired
        /// Holders of the secret in this file.
        case secret(file: String)
        case open
        /// No handshake and no encryption (`--insecure`).
        case insecure
    }

    /// The transports to run (`--transport`) and where they listen.
    struct Transports: Equatable, Sendable {
        var lan: Bool
        var rfcomm: Bool
        var le: Bool
        /// Whether Bluetooth may be missing (`all`): the daemon then carries on with the LAN.
        var bluetoothOptional: Bool
        var adapter: String?
        var rfcommChannel: Int
        var lePSM: Int
    }

    /// A `--bt-peer`: its endpoint, and whether its channel was given (otherwise its SDP record names it).
    struct BluetoothPeer: Equatable, Sendable {
        var endpoint: Endpoint
        var channelGiven: Bool
    }

    /// Where the page listens (`--http`).
    struct PageAddress: Equatable, Sendable {
        var host: String
        var port: Int
    }

    var logLevel: Logger.Level
    var controlPath: String
    var stateDirectory: String
    /// Whether the state directory was given (`--state-dir`) rather than the default.
    var stateDirectoryGiven: Bool
    var inbox: String
    var displayName: String
    var sessionName: String
    var serviceType: String
    var listen: String
    var port: Int
    var maxPeers: Int
    var askToAccept: Bool
    var admission: Admission
    /// The ciphers offered, in order (`LANSESSION_CIPHERS`); nil: this CPU's default.
    var ciphers: [NoiseCipher]?
    var deliveryTimeout: Duration?
    var partialFileLifetime: Duration?
    var transports: Transports
    /// Whether DNS-SD runs (avahi-daemon): on the LAN, unless `--no-discovery`.
    var lanDiscovery: Bool
    /// Whether LE advertising and scanning run where the LE transport does.
    var leDiscovery: Bool
    var peers: [Endpoint]
    var bluetoothPeers: [BluetoothPeer]
    var lePeers: [Endpoint]
    var page: PageAddress?

    var isInsecure: Bool { admission == .insecure }
}

/// Options that make no configuration, in one line for people.
enum ConfigurationError: Error, Equatable, CustomStringConvertible {
    /// An option's value, or a combination of options, that cannot be: a usage error.
    case option(String)
    /// An environment variable's value that cannot be.
    case environment(String)

    var description: String {
        switch self {
        case .option(let message), .environment(let message): message
        }
    }

    /// The daemon's exit status for it: 2 for a usage error, 1 otherwise.
    var exitStatus: Int32 {
        switch self {
        case .option: 2
        case .environment: 1
        }
    }
}

extension DaemonConfiguration {
    /// The configuration `options` ask for, on a machine named `hostName` (the default name), for the user `uid` with
    /// `environment` (the default control socket and state directory, `LANSESSION_CIPHERS`).
    init(
        options: SessionDaemon, environment: [String: String], uid: UInt32, hostName: String
    ) throws(ConfigurationError) {
        func number(
            _ value: CommandLineNumber<Int>, _ name: String, in range: ClosedRange<Int>
        ) throws(ConfigurationError) -> Int {
            do {
                return try value.check(name, in: range)
            } catch {
                throw .option(error.description)
            }
        }
        if let control = options.control, control.isEmpty { throw .option("--control needs a non-empty path") }
        if let stateDir = options.stateDir, stateDir.isEmpty { throw .option("--state-dir needs a non-empty path") }
        maxPeers = try number(options.maxPeers, "--max-peers", in: 1...64)
        port = try number(options.port, "--port", in: 0...65_535)
        let delivery = try number(options.deliveryTimeout, "--delivery-timeout", in: 0...86_400)
        if let http = options.http {
            guard let address = Self.pageAddress(http) else {
                throw .option("--http \(http) is not [ADDR:]PORT (PORT 0...65535)")
            }
            page = address
        } else {
            page = nil
        }
        let days = try number(options.partialFileDays, "--partial-file-days", in: 0...3_650)
        guard options.accept == "auto" || options.accept == "ask" else { throw .option("--accept must be auto or ask") }
        guard let level = Logger.Level(rawValue: options.logLevel) else {
            throw .option("--log-level must be trace, debug, info, notice, warning, error or critical")
        }
        peers = try options.peers.map { peer throws(ConfigurationError) in
            guard let endpoint = Endpoint(parsing: peer) else { throw .option("--peer \(peer) is not HOST:PORT") }
            return endpoint
        }
        let channel = try number(options.btChannel, "--bt-channel", in: RFCOMMTransport.channels)
        bluetoothPeers = try options.btPeers.map { peer throws(ConfigurationError) in
            guard let endpoint = SessionDaemon.bluetoothEndpoint(peer, defaultChannel: channel) else {
                throw .option("--bt-peer \(peer) is not ADDRESS[/CHANNEL] (AA:BB:CC:DD:EE:FF, channel 1...30)")
            }
            return BluetoothPeer(endpoint: endpoint, channelGiven: peer.contains("/"))
        }
        let psm = try number(options.lePSM, "--le-psm", in: L2CAPTransport.psms)
        lePeers = try options.lePeers.map { peer throws(ConfigurationError) in
            guard let endpoint = SessionDaemon.leEndpoint(peer, defaultPSM: psm) else {
                throw .option("--le-peer \(peer) is not ADDRESS[/PSM] (AA:BB:CC:DD:EE:FF, PSM 128...255)")
            }
            return endpoint
        }
        let choice = options.transport
        if !choice.lan && !choice.le && !options.noDiscovery {
            throw .option(
                "--transport rfcomm needs --no-discovery (DNS-SD runs on the LAN; use all for both, or le to discover over LE)"
            )
        }
        admission = try Self.admission(options)
        displayName = options.name ?? hostName
        guard !displayName.isEmpty, displayName.utf8.count <= Wire.maxNameLength else {
            throw .option("--name must be 1...\(Wire.maxNameLength) UTF-8 bytes")
        }
        guard options.session.utf8.count <= Wire.maxNameLength else {
            throw .option("--session must be at most \(Wire.maxNameLength) UTF-8 bytes")
        }
        if let list = environment[SessionDaemon.ciphersVariable] {
            guard let offered = NoiseCipher.list(parsing: list) else {
                throw .environment(
                    "\(SessionDaemon.ciphersVariable)=\(list) is not a comma-separated list of chachapoly and aesgcm")
            }
            ciphers = offered
        } else {
            ciphers = nil
        }
        logLevel = level
        controlPath = options.control ?? ControlSocket.defaultPath(environment: environment, uid: uid)
        stateDirectory = options.stateDir ?? SessionDaemon.defaultStateDirectory(environment, uid)
        stateDirectoryGiven = options.stateDir != nil
        inbox = options.inbox ?? URL(fileURLWithPath: stateDirectory).appendingPathComponent("inbox").path
        sessionName = options.session
        serviceType = options.serviceType
        listen = options.listen
        askToAccept = options.accept == "ask"
        deliveryTimeout = delivery == 0 ? nil : .seconds(delivery)
        partialFileLifetime = days == 0 ? nil : .seconds(days * 24 * 3600)
        transports = Transports(
            lan: choice.lan, rfcomm: choice.rfcomm, le: choice.le, bluetoothOptional: choice.all,
            adapter: options.btAdapter, rfcommChannel: channel, lePSM: psm)
        lanDiscovery = !options.noDiscovery && choice.lan
        leDiscovery = !options.noDiscovery
    }

    /// Who gets in: `--admission`, `--secret-file` and `--insecure` together.
    private static func admission(_ options: SessionDaemon) throws(ConfigurationError) -> Admission {
        switch (options.admission, options.secretFile) {
        case (.secret, nil): throw .option("--admission secret needs --secret-file")
        case (.paired, _?), (.open, _?): throw .option("--secret-file goes with --admission secret only")
        default: break
        }
        if options.insecure {
            guard options.secretFile == nil, options.admission == nil || options.admission == .open else {
                throw .option("--insecure admits anyone: it goes with --admission open only")
            }
            return .insecure
        }
        if let file = options.secretFile { return .secret(file: file) }
        return options.admission == .open ? .open : .paired
    }

    /// `[ADDR:]PORT` of --http (`[::1]:8080` for IPv6): the address (127.0.0.1 by default) and port.
    static func pageAddress(_ text: String) -> PageAddress? {
        var host = "127.0.0.1"
        var portText = Substring(text)
        if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { return nil }
        }
        guard let port = Int(portText), (0...65_535).contains(port) else { return nil }
        return PageAddress(host: host, port: port)
    }

    /// The session's configuration, with the device's `identity`, the session's `secret` (read from
    /// ``Admission/secret(file:)``) and the file of trusted devices in the state directory.
    func sessionConfiguration(
        identity: DeviceIdentity, secret: [UInt8]?, trustedDevicesFile: String, membersFile: String? = nil,
        durableDirectory: String? = nil
    ) -> SessionConfiguration {
        var configuration = SessionConfiguration(
            peerID: identity.peerID, identity: identity, displayName: displayName, sessionName: sessionName,
            host: listen, port: port, maxPeers: maxPeers, invitationPolicy: askToAccept ? .ask : .acceptAll)
        switch admission {
        case .insecure:
            configuration.isInsecure = true
            configuration.admission = .open
        case .secret:
            configuration.admission = secret.map { .secret($0) } ?? .paired
        case .open:
            configuration.admission = .open
        case .paired:
            configuration.admission = .paired
        }
        if let ciphers { configuration.ciphers = ciphers }
        configuration.trustedDevicesFile = trustedDevicesFile
        configuration.membersFile = membersFile
        configuration.durableDirectory = durableDirectory
        // Byte streams are taken while a client listens (`streams`, see StreamDesk), declined otherwise; files go to
        // the inbox.
        configuration.acceptsByteStreams = false
        configuration.inbox = inbox
        configuration.deliveryTimeout = deliveryTimeout
        configuration.partialFileLifetime = partialFileLifetime
        configuration.transportPriority = [LANTransport.name, RFCOMMTransport.name, L2CAPTransport.name]
        return configuration
    }
}
