import Foundation
import SessionControl
import TestSupport
import Testing

/// Several paths per peer on test hosts: failover between two networks, and a full mesh from a static ring.
@Suite(
    "paths on test hosts", .serialized,
    .disabled(if: TestLab.unavailableReason != nil, Comment(rawValue: TestLab.unavailableReason ?? ""))
)
struct PathTests {
    /// Host `host`'s links to `peer`, as its `peers` lists them.
    func links(_ cluster: Cluster, of peer: String, in host: Int) -> [[String: Any]] {
        cluster.peers(host)[peer]?["links"] as? [[String: Any]] ?? []
    }

    func states(_ links: [[String: Any]]) -> [String] {
        links.compactMap { $0["state"] as? String }.sorted()
    }

    @Test("two networks: a link on each; the active path dies mid-stream, traffic moves, nothing lost or doubled")
    func failoverBetweenNetworks() async throws {
        let cluster = try Cluster(hosts: 2, networks: 2)
        try cluster.start(1)
        try cluster.start(2)
        #expect(
            await waitUntil(.seconds(8), every: .milliseconds(50)) {
                cluster.connectedPeers(1) == 1 && cluster.connectedPeers(2) == 1
            })
        let one = try cluster.peerID(1)
        let two = try cluster.peerID(2)
        let bothUp = await waitUntil(.seconds(10), every: .milliseconds(50)) {
            states(links(cluster, of: two, in: 1)) == ["active", "standby"]
                && states(links(cluster, of: one, in: 2)) == ["active", "standby"]
        }
        #expect(bothUp, "links: \(links(cluster, of: two, in: 1))")
        let active = links(cluster, of: two, in: 1).first { $0["state"] as? String == "active" }?["address"] as? String
        let interface = active?.hasPrefix("10.78.") == true ? "eth1" : "eth0"
        let watcher = try cluster.watch(1, seconds: 120)
        defer { watcher.stop() }
        try await Task.sleep(for: .milliseconds(300))

        // Host 2 counts 3,000 one by one; after 1,000 its active path's interface goes down.
        let control = try cluster.control(2)
        var downAt: ContinuousClock.Instant?
        for index in 1...3_000 {
            _ = try control.call(ControlCommand.increment(count: 1), as: IncrementResult.self)
            if index == 1_000 {
                try cluster.lab.setLink(2, interface: interface, up: false)
                downAt = .now
            }
        }
        let delivered = await waitUntil(.seconds(10), every: .milliseconds(50)) { cluster.counts(1)?[two] == 3_000 }
        #expect(delivered, "host 1 counts host 2 at \(cluster.counts(1)?[two] ?? -1)")
        try await Task.sleep(for: .milliseconds(500))
        #expect(cluster.counts(1)?[two] == 3_000, "exactly 3,000, not more")

        // The first increment that arrived after the interface went down, beyond what was under way then.
        let counts = watcher.timedEvents.compactMap { entry -> (ContinuousClock.Instant, Int)? in
            guard entry.event["event"] as? String == "counter", entry.event["peerID"] as? String == two,
                let count = entry.event["count"] as? Int
            else { return nil }
            return (entry.at, count)
        }
        if let downAt {
            let before = counts.filter { $0.0 <= downAt }.map(\.1).max() ?? 0
            if let resumed = counts.first(where: { $0.0 > downAt && $0.1 > before + 5 }) {
                print("measured: traffic on the other path \(resumed.0 - downAt) after the interface went down")
                #expect(resumed.0 - downAt < .seconds(1.5), "failover took \(resumed.0 - downAt)")
            } else {
                Issue.record("no increment arrived after the interface went down")
            }
        }
        let lostOrLeft = watcher.events.filter {
            ($0["event"] as? String == "peerLost" || $0["event"] as? String == "peerLeft")
                && $0["peerID"] as? String == two
        }
        #expect(lostOrLeft.isEmpty, "host 1 reported host 2 lost or left: \(lostOrLeft)")

        // The interface comes back: its link returns, as a standby.
        try cluster.lab.setLink(2, interface: interface, up: true)
        let back = await waitUntil(.seconds(15), every: .milliseconds(50)) {
            states(links(cluster, of: two, in: 1)) == ["active", "standby"]
        }
        #expect(back, "links after the interface came back: \(links(cluster, of: two, in: 1))")
    }

    @Test("four hosts without discovery, each given only the next one: a full mesh with one layout")
    func staticRing() async throws {
        let cluster = try Cluster(hosts: 4)
        for host in 1...4 {
            let next = host % 4 + 1
            try cluster.start(host, extra: ["--no-discovery", "--peer", "\(try cluster.lab.address(next)):47000"])
        }
        let startedAt = ContinuousClock.now
        let meshed = await waitUntil(.seconds(8), every: .milliseconds(50)) {
            (1...4).allSatisfy { cluster.connectedPeers($0) == 3 }
        }
        #expect(meshed, "connected peers: \((1...4).map { cluster.connectedPeers($0) })")
        print("measured: static ring of four meshed \(ContinuousClock.now - startedAt) after the last start")
        // Every host gives every other host the same player index, and the indexes are 0...3.
        let ids = try (1...4).map { try cluster.peerID($0) }
        let agreed = await waitUntil(.seconds(3), every: .milliseconds(50)) {
            var index: [String: Int] = [:]
            for host in 1...4 {
                for (peer, info) in cluster.peers(host) {
                    guard let player = info["playerIndex"] as? Int else { return false }
                    if let seen = index[peer], seen != player { return false }
                    index[peer] = player
                }
            }
            return Set(ids) == Set(index.keys) && Set(index.values) == [0, 1, 2, 3]
        }
        #expect(agreed, "the hosts disagree on player indexes")
    }
}
