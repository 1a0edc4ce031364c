import Foundation
import SessionControl
import TestSupport
import Testing

/// A daemon stopped (TERM) and started again at once, over and over, as an upgrade or an operator does: its peers heard
/// its bye, and the new process has the same device, name and port.
@Suite(
    "quick restarts on test hosts", .serialized,
    .disabled(if: TestLab.unavailableReason != nil, Comment(rawValue: TestLab.unavailableReason ?? ""))
)
struct RestartTests {
    /// Restarts in a row; each must reconnect within `deadline`.
    static let restarts = Int(ProcessInfo.processInfo.environment["LANSESSION_RESTARTS"] ?? "") ?? 100
    static let deadline = Duration.seconds(1)
    /// How soon an open page must be back on the restarted daemon (it retries 100 ms after a close or a refusal).
    static let pageDeadline = Duration.seconds(2)

    /// The peers `host` sees connected, by id (none while its daemon does not answer).
    func connected(_ cluster: Cluster, _ host: Int) -> Set<String> {
        guard let control = try? cluster.control(host),
            let peers = try? control.call(ControlCommand.peers, as: [PeerResult].self)
        else { return [] }
        return Set(peers.filter { $0.state == "connected" }.map(\.peerID))
    }

    /// Keeps a page's WebSocket open, reading, reconnecting 100 ms after it closes, for argv[2] seconds; prints
    /// `{"opened": true}` each time the daemon takes the upgrade.
    static let openPage = """
        import re, socket, sys, time, base64, os
        host, port, token = re.match(r"http://([^:/]+):(\\d+)/\\?token=(.*)", sys.argv[1]).groups()
        end = time.monotonic() + float(sys.argv[2])
        while time.monotonic() < end:
            try:
                s = socket.create_connection((host, int(port)), timeout=1)
                key = base64.b64encode(os.urandom(16)).decode()
                s.sendall((f"GET /ws HTTP/1.1\\r\\nHost: {host}:{port}\\r\\nOrigin: http://{host}:{port}\\r\\n"
                           f"Cookie: lansession-page={token}\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                           f"Sec-WebSocket-Key: {key}\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n").encode())
                s.settimeout(None)
                first = s.recv(65536)
                if first.startswith(b"HTTP/1.1 101"):
                    print('{"opened": true}', flush=True)
                while first and s.recv(65536):
                    pass
            except OSError:
                pass
            time.sleep(0.1)
        """

    @Test("TERM then start again within 0.2 s, many times: every restart reconnects both ways within a second")
    func quickRestarts() async throws {
        let hosts = Int(ProcessInfo.processInfo.environment["LANSESSION_RESTART_HOSTS"] ?? "") ?? 3
        let cluster = try Cluster(hosts: hosts)
        let page =
            ["--http", "127.0.0.1:8080"]
            + (ProcessInfo.processInfo.environment["LANSESSION_RESTART_LOGS"] == "1" ? ["--log-level", "debug"] : [])
        for host in 1...hosts { try cluster.start(host, extra: page) }
        #expect(
            await waitUntil(.seconds(10), every: .milliseconds(20)) {
                (1...hosts).allSatisfy { connected(cluster, $0).count == hosts - 1 }
            }, "the first start meshes")
        let ids = Dictionary(uniqueKeysWithValues: try (1...hosts).map { ($0, try cluster.peerID($0)) })
        // A page open on host 1 all along, as a browser keeps it: it reconnects 100 ms after each restart.
        let web = try cluster.client(1, ["web"]) as? [String: Any]
        let openPage = try cluster.lab.spawn(1, ["python3", "-c", Self.openPage, web?["url"] as? String ?? "", "600"])
        defer { openPage.stop() }
        let others = Set((2...hosts).map { ids[$0]! })
        var times: [Duration] = []
        var late: [String] = []
        var pageLate: [Int] = []
        let opened = { openPage.events.filter { $0["opened"] != nil }.count }
        for round in 1...Self.restarts {
            let openedBefore = opened()
            // TERM, and the new process started before the old one may have ended (an operator's `restart`, or
            // systemd's with a quick stop): its bye, its exit and avahi's goodbye are in flight meanwhile.
            let old = cluster.daemons[1]
            old?.terminate()
            let pause = [200, 50, 100, 150][round % 4]
            try await Task.sleep(for: .milliseconds(pause))
            let started = ContinuousClock.now
            try cluster.start(1, extra: page)
            old?.stop()
            let joined = await waitUntil(.seconds(15), every: .milliseconds(10)) {
                connected(cluster, 1) == others && (2...hosts).allSatisfy { connected(cluster, $0).contains(ids[1]!) }
            }
            let took = ContinuousClock.now - started
            times.append(took)
            if !joined || took > Self.deadline {
                let seen = (2...hosts).map { "h\($0) sees h1 \(cluster.state(of: ids[1]!, in: $0) ?? "nothing")" }
                late.append(
                    "round \(round) (started \(pause) ms after TERM): \(joined ? "\(took)" : "not within 15 s"); "
                        + "h1 sees \(connected(cluster, 1).count) of \(hosts - 1) connected, "
                        + seen.joined(separator: ", "))
                // Stopped here, with every daemon's log (LANSESSION_RESTART_LOGS=1 runs them at debug, with the dials).
                for host in 1...hosts {
                    cluster.daemons[host]?.stop()
                    print("--- h\(host)'s log:\n" + (cluster.daemons[host]?.stderr ?? ""))
                }
                break
            }
            // The page comes back to the new daemon as a browser's does (it tries every 100 ms): before the next TERM,
            // so that each daemon is seen by it however fast the restarts are.
            if !(await waitUntil(Self.pageDeadline, every: .milliseconds(10)) { opened() > openedBefore }) {
                pageLate.append(round)
            }
        }
        let sorted = times.sorted()
        print(
            "measured: \(Self.restarts) quick restarts reconnected in p50 \(sorted[sorted.count / 2]), "
                + "max \(sorted.last!)")
        #expect(late.isEmpty, "\(late.count) of \(Self.restarts) restarts late:\n\(late.joined(separator: "\n"))")
        // The page was there: it reconnected to every daemon started, each time within the deadline.
        print("measured: the open page connected \(opened()) times over \(Self.restarts + 1) daemons")
        #expect(
            pageLate.isEmpty, "the page on host 1 did not reconnect within \(Self.pageDeadline) in rounds \(pageLate)")
    }
}
