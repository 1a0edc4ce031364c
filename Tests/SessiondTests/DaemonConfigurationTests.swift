import Foundation
@_spi(Diagnostics) import LanSession
import Testing

@testable import sessiond

/// sessiond's options in, its configuration out: what each option gives, and the combinations it refuses, each with
/// its one line.
@Suite("DaemonConfiguration")
struct DaemonConfigurationTests {
    static let environment = ["HOME": "/home/ada"]

    /// The configuration of `arguments`, as user 1000 on a machine named "host".
    static func configuration(
        _ arguments: [String], environment: [String: String] = environment, uid: UInt32 = 1000
    ) throws -> DaemonConfiguration {
        try DaemonConfiguration(
            options: SessionDaemon.parse(arguments), environment: environment, uid: uid, hostName: "host")
    }

    /// Why `arguments` make no configuration.
    static func refusal(
        _ arguments: [String], _ environment: [String: String] = environment
    ) throws
        -> ConfigurationError?
    {
        let options = try SessionDaemon.parse(arguments)
        do {
            _ = try DaemonConfiguration(options: options, environment: environment, uid: 1000, hostName: "host")
            return nil
        } catch {
            return error
        }
    }

    @Test("no options: the LAN, DNS-SD, paired admission, the user's own socket and state directory")
    func defaults() throws {
        let configuration = try Self.configuration([])
        #expect(configuration.displayName == "host")
        #expect(configuration.sessionName == "default")
        #expect(configuration.controlPath == "/tmp/lansession-1000/sessiond.sock")
        #expect(configuration.stateDirectory == "/home/ada/.local/state/lansession")
        #expect(!configuration.stateDirectoryGiven)
        #expect(configuration.inbox == "/home/ada/.local/state/lansession/inbox")
        #expect(configuration.listen == "0.0.0.0" && configuration.port == 0 && configuration.maxPeers == 8)
        #expect(configuration.admission == .paired)
        #expect(configuration.transports.lan && !configuration.transports.rfcomm && !configuration.transports.le)
        #expect(configuration.lanDiscovery)
        #expect(configuration.page == nil && configuration.ciphers == nil)
        #expect(configuration.deliveryTimeout == .seconds(300))
        #expect(configuration.partialFileLifetime == .seconds(7 * 24 * 3600))
        #expect(configuration.logLevel == .info && !configuration.askToAccept)
        #expect(configuration.peers.isEmpty && configuration.bluetoothPeers.isEmpty && configuration.lePeers.isEmpty)
    }

    @Test("root's socket and state directory; XDG's for a user")
    func directories() throws {
        let root = try Self.configuration([], uid: 0)
        #expect(root.controlPath == "/run/lansession/sessiond.sock")
        #expect(root.stateDirectory == "/var/lib/lansession")
        let user = try Self.configuration(
            [], environment: ["XDG_STATE_HOME": "/xdg/state", "XDG_RUNTIME_DIR": "/run/user/1000"])
        #expect(user.controlPath == "/run/user/1000/lansession/sessiond.sock")
        #expect(user.stateDirectory == "/xdg/state/lansession")
        let given = try Self.configuration(["--state-dir", "/srv/ls", "--inbox", "/srv/in", "--control", "/c.sock"])
        #expect(given.stateDirectory == "/srv/ls" && given.stateDirectoryGiven)
        #expect(given.inbox == "/srv/in" && given.controlPath == "/c.sock")
    }

    @Test("every option in its place")
    func options() throws {
        let configuration = try Self.configuration([
            "--name", "ada", "--session", "lab", "--listen", "127.0.0.1", "--port", "7000", "--max-peers", "3",
            "--no-discovery", "--peer", "10.0.0.2:7001", "--accept", "ask", "--http", "[::1]:8080",
            "--delivery-timeout", "0", "--partial-file-days", "0", "--log-level", "debug", "--transport", "all",
            "--bt-adapter", "hci1", "--bt-channel", "7", "--bt-peer", "aa:bb:cc:dd:ee:ff", "--bt-peer",
            "AA:BB:CC:DD:EE:01/9", "--le-psm", "130", "--le-peer", "AA:BB:CC:DD:EE:02", "--admission", "open",
        ])
        #expect(configuration.displayName == "ada" && configuration.sessionName == "lab")
        #expect(configuration.listen == "127.0.0.1" && configuration.port == 7000 && configuration.maxPeers == 3)
        #expect(!configuration.lanDiscovery && !configuration.leDiscovery)
        #expect(configuration.peers == [Endpoint(transport: LANTransport.name, host: "10.0.0.2", port: 7001)])
        #expect(configuration.askToAccept)
        #expect(configuration.page == DaemonConfiguration.PageAddress(host: "::1", port: 8080))
        #expect(configuration.deliveryTimeout == nil && configuration.partialFileLifetime == nil)
        #expect(configuration.logLevel == .debug)
        #expect(
            configuration.transports
                == DaemonConfiguration.Transports(
                    lan: true, rfcomm: true, le: true, bluetoothOptional: true, adapter: "hci1", rfcommChannel: 7,
                    lePSM: 130))
        #expect(configuration.bluetoothPeers.map(\.endpoint.host) == ["AA:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:01"])
        #expect(configuration.bluetoothPeers.map(\.endpoint.port) == [7, 9])
        #expect(configuration.bluetoothPeers.map(\.channelGiven) == [false, true])
        #expect(configuration.lePeers.map(\.port) == [130])
        #expect(configuration.admission == .open)
    }

    @Test("admission from --admission, --secret-file and --insecure")
    func admission() throws {
        #expect(try Self.configuration(["--secret-file", "/s"]).admission == .secret(file: "/s"))
        #expect(
            try Self.configuration(["--admission", "secret", "--secret-file", "/s"]).admission
                == .secret(file: "/s"))
        #expect(try Self.configuration(["--insecure"]).admission == .insecure)
        #expect(try Self.configuration(["--insecure", "--admission", "open"]).isInsecure)
        #expect(try Self.configuration(["--transport", "le"]).leDiscovery)
        #expect(try !Self.configuration(["--transport", "le"]).lanDiscovery)
    }

    @Test("bad values and bad combinations: one line each, a usage error")
    func refusals() throws {
        let cases: [([String], String)] = [
            (["--control", ""], "--control needs a non-empty path"),
            (["--state-dir", ""], "--state-dir needs a non-empty path"),
            (["--max-peers", "0"], "--max-peers must be 1...64 (got 0)"),
            (["--port", "70000"], "--port must be 0...65535 (got 70000)"),
            (["--delivery-timeout", "-1"], "--delivery-timeout must be 0...86400 (got -1)"),
            (["--http", "host:"], "--http host: is not [ADDR:]PORT (PORT 0...65535)"),
            (["--partial-file-days", "4000"], "--partial-file-days must be 0...3650 (got 4000)"),
            (["--accept", "maybe"], "--accept must be auto or ask"),
            (["--log-level", "loud"], "--log-level must be trace, debug, info, notice, warning, error or critical"),
            (["--peer", "nowhere"], "--peer nowhere is not HOST:PORT"),
            (["--bt-channel", "x"], "--bt-channel must be 1...30 (got x)"),
            (
                ["--bt-peer", "AA:BB"],
                "--bt-peer AA:BB is not ADDRESS[/CHANNEL] (AA:BB:CC:DD:EE:FF, channel 1...30)"
            ),
            (["--le-psm", "300"], "--le-psm must be 128...255 (got 300)"),
            (
                ["--le-peer", "AA:BB:CC:DD:EE:FF/3"],
                "--le-peer AA:BB:CC:DD:EE:FF/3 is not ADDRESS[/PSM] (AA:BB:CC:DD:EE:FF, PSM 128...255)"
            ),
            (
                ["--transport", "rfcomm"],
                "--transport rfcomm needs --no-discovery (DNS-SD runs on the LAN; use all for both, or le to discover over LE)"
            ),
            (["--admission", "secret"], "--admission secret needs --secret-file"),
            (["--admission", "paired", "--secret-file", "/s"], "--secret-file goes with --admission secret only"),
            (["--admission", "open", "--secret-file", "/s"], "--secret-file goes with --admission secret only"),
            (["--insecure", "--admission", "paired"], "--insecure admits anyone: it goes with --admission open only"),
            (["--insecure", "--secret-file", "/s"], "--insecure admits anyone: it goes with --admission open only"),
            (["--name", ""], "--name must be 1...63 UTF-8 bytes"),
            (["--session", String(repeating: "s", count: 64)], "--session must be at most 63 UTF-8 bytes"),
        ]
        for (arguments, message) in cases {
            let error = try Self.refusal(arguments)
            #expect(error == .option(message), "\(arguments)")
            #expect(error?.exitStatus == 2, "\(arguments)")
            #expect(error?.description.contains("\n") == false, "\(arguments)")
        }
    }

    @Test("LANSESSION_CIPHERS: the ciphers offered, in order; a bad list stops the start")
    func ciphers() throws {
        let environment = Self.environment.merging([SessionDaemon.ciphersVariable: "chachapoly"]) { $1 }
        #expect(try Self.configuration([], environment: environment).ciphers == [.chaChaPoly])
        let bad = Self.environment.merging([SessionDaemon.ciphersVariable: "rot13"]) { $1 }
        let error = try Self.refusal([], bad)
        #expect(
            error == .environment("LANSESSION_CIPHERS=rot13 is not a comma-separated list of chachapoly and aesgcm"))
        #expect(error?.exitStatus == 1)
    }

    @Test("--http: a port alone is on 127.0.0.1; an IPv6 address in brackets")
    func pageAddress() {
        #expect(DaemonConfiguration.pageAddress("8080") == .init(host: "127.0.0.1", port: 8080))
        #expect(DaemonConfiguration.pageAddress("0.0.0.0:0") == .init(host: "0.0.0.0", port: 0))
        #expect(DaemonConfiguration.pageAddress("[::1]:80") == .init(host: "::1", port: 80))
        #expect(DaemonConfiguration.pageAddress(":80") == nil)
        #expect(DaemonConfiguration.pageAddress("65536") == nil)
    }

    @Test("the session's configuration: identity, admission with the secret read, the daemon's own settings")
    func sessionConfiguration() throws {
        let identity = DeviceIdentity.generate()
        let secret = try Self.configuration(["--secret-file", "/s", "--accept", "ask", "--delivery-timeout", "0"])
            .sessionConfiguration(identity: identity, secret: [1, 2, 3], trustedDevicesFile: "/t.json")
        #expect(secret.peerID == identity.peerID)
        #expect(secret.admission == .secret([1, 2, 3]) && !secret.isInsecure)
        #expect(secret.trustedDevicesFile == "/t.json")
        #expect(secret.inbox == "/home/ada/.local/state/lansession/inbox")
        #expect(!secret.acceptsByteStreams && secret.deliveryTimeout == nil)
        #expect(secret.transportPriority == [LANTransport.name, "rfcomm", "le"])
        if case .ask = secret.invitationPolicy {} else { Issue.record("--accept ask") }
        let insecure = try Self.configuration(["--insecure"])
            .sessionConfiguration(identity: identity, secret: nil, trustedDevicesFile: "/t.json")
        #expect(insecure.isInsecure && insecure.admission == .open)
        let ciphers = try Self.configuration([], environment: [SessionDaemon.ciphersVariable: "aesgcm"])
            .sessionConfiguration(identity: identity, secret: nil, trustedDevicesFile: "/t.json")
        #expect(ciphers.ciphers == [.aesGCM])
    }
}
