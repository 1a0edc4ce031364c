import Foundation
import SessionControl
import TestSupport
import Testing

/// A lab with a sessiond per host; stops the daemons and removes the lab when it goes away.
final class Cluster {
    static let daemon = TestLab.binDirectory + "/sessiond"
    static let client = TestLab.binDirectory + "/session-client"
    /// Where each daemon keeps its state: the host's own /run, so it survives restarts of the daemon.
    static let stateDirectory = "/run/lansession-state"

    let lab: TestLab
    var daemons: [Int: HostProcess] = [:]

    init(hosts: Int, networks: Int = 1) throws {
        lab = try TestLab.up(hosts, networks: networks)
    }

    deinit {
        for daemon in daemons.values { daemon.stop() }
        lab.down()
    }

    /// A lab of `hosts` hosts with a daemon on each, once every daemon sees every other one connected.
    static func mesh(_ hosts: Int, within timeout: Duration = .seconds(5)) async throws -> Cluster {
        let cluster = try Cluster(hosts: hosts)
        for host in 1...hosts { try cluster.start(host) }
        let lastStart = ContinuousClock.now
        let meshed = await waitUntil(timeout, every: .milliseconds(50)) {
            (1...hosts).allSatisfy { cluster.connectedPeers($0) == hosts - 1 }
        }
        let elapsed = ContinuousClock.now - lastStart
        #expect(meshed, "not every daemon had \(hosts - 1) connected peers within \(timeout)")
        print("measured: mesh of \(hosts) complete \(elapsed) after the last start")
        return cluster
    }

    /// Starts sessiond in `host`.
    func start(_ host: Int, stateDirectory: String = Cluster.stateDirectory, extra: [String] = []) throws {
        daemons[host] = try lab.spawn(
            host,
            [
                Cluster.daemon, "--name", "h\(host)", "--session", "e2e", "--port", "47000",
                "--state-dir", stateDirectory, "--log-level", "info",
            ] + (extra.contains("--admission") || extra.contains("--secret-file") ? [] : ["--admission", "open"])
                + extra)
    }

    /// Runs session-client in `host` and decodes its JSON output.
    func client(_ host: Int, _ arguments: [String]) throws -> Any {
        let result = try lab.run(host, [Cluster.client, "--json"] + arguments, timeout: 30)
        guard result.status == 0 else {
            throw TestLabError(
                "session-client \(arguments) in host \(host) exited \(result.status): \(result.stderr)")
        }
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8), options: [.fragmentsAllowed])
    }

    /// A connection to the control socket of the daemon in `host`, reached through the host's /run.
    func control(_ host: Int) throws -> ControlClient {
        let client = try ControlClient(path: "/proc/\(try lab.holderPID(host))/root/run/lansession/sessiond.sock")
        client.setReadTimeout(seconds: 10)
        return client
    }

    /// Connected peers of the daemon in `host` (0 while it is not up yet).
    func connectedPeers(_ host: Int) -> Int {
        guard let status = try? client(host, ["status"]) as? [String: Any] else { return 0 }
        return status["peers"] as? Int ?? 0
    }

    func peerID(_ host: Int) throws -> String {
        let status = try client(host, ["status"]) as? [String: Any]
        return status?["peerID"] as? String ?? ""
    }

    /// The counts the daemon in `host` holds, by peer id (its own included); nil while it does not answer.
    func counts(_ host: Int) -> [String: Int]? {
        guard let counter = try? client(host, ["counter"]) as? [String: Any],
            let local = counter["local"] as? Int, let peers = counter["peers"] as? [String: [String: Any]],
            let own = try? peerID(host)
        else { return nil }
        var counts = peers.compactMapValues { $0["count"] as? Int }
        counts[own] = local
        return counts
    }

    /// The `peers` listing of the daemon in `host`, by peer id.
    func peers(_ host: Int) -> [String: [String: Any]] {
        guard let peers = try? client(host, ["peers"]) as? [[String: Any]] else { return [:] }
        return Dictionary(peers.compactMap { peer in (peer["peerID"] as? String).map { ($0, peer) } }) { a, _ in a }
    }

    /// The state of `peer` as the daemon in `host` sees it.
    func state(of peer: String, in host: Int) -> String? {
        peers(host)[peer]?["state"] as? String
    }

    /// Starts a capture on the lab's switch (every port of its bridge) for `seconds`, once it listens; its last event says which of the hex
    /// `markers` crossed the bridge.
    func sniff(seconds: Int, markers: [String]) async throws -> HostProcess {
        let sniffer = try HostProcess.local(
            ["ip", "netns", "exec", "\(lab.name)-sw", "python3", "-c", Attacker.program, "sniff", "any", "\(seconds)"]
                + markers)
        guard await sniffer.waitFor(timeout: 10, { $0["listening"] != nil }) != nil else {
            sniffer.stop()
            throw TestLabError("the capture on the bridge did not start: \(sniffer.stderr)")
        }
        return sniffer
    }

    /// The bytes of the app's greeting frame (`handshake`) of the daemon in `host`, in hex: application payload
    /// that a capture finds only when links are not encrypted.
    static func greeting(_ host: Int) -> String {
        "042002683\(host)"
    }

    /// Starts `session-client watch` in `host`.
    func watch(_ host: Int, seconds: Int = 60) throws -> HostProcess {
        try lab.spawn(host, [Cluster.client, "--json", "watch", "--timeout", "\(seconds)"])
    }
}
