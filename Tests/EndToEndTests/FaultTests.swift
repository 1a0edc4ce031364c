import Foundation
import SessionControl
import TestSupport
import Testing

/// Real faults on test hosts: cut paths, bounced links, a full disk, a start during a flap, a forged record, state
/// files that cannot be read back. Each test makes its own lab and removes it on every exit path.
@Suite(
    "faults on test hosts", .serialized,
    .disabled(if: TestLab.unavailableReason != nil, Comment(rawValue: TestLab.unavailableReason ?? ""))
)
struct FaultTests {
    /// Waits until host `a` and host `b` see each other in `state` (both ways).
    func waitForState(
        _ cluster: Cluster, _ a: Int, _ b: Int, _ state: String, _ ids: [Int: String], within: Duration = .seconds(15)
    ) async -> Bool {
        await waitUntil(within, every: .milliseconds(50)) {
            cluster.state(of: ids[b]!, in: a) == state && cluster.state(of: ids[a]!, in: b) == state
        }
    }

    func ids(_ cluster: Cluster, _ hosts: ClosedRange<Int>) throws -> [Int: String] {
        Dictionary(uniqueKeysWithValues: try hosts.map { ($0, try cluster.peerID($0)) })
    }

    @Test("a count relayed by a third host plus the owner's replayed increments: counted once everywhere")
    func relayedStatePlusReplay() async throws {
        let cluster = try await Cluster.mesh(3)
        let ids = try ids(cluster, 1...3)
        // Cut 1-2 only; mDNS still flows, so they keep finding each other and failing to link.
        try cluster.lab.setCut(between: 1, and: 2, true)
        #expect(await waitForState(cluster, 1, 2, "reconnecting", ids))
        // Host 1 counts 100 one by one; host 3 receives them, host 2 cannot; host 1 keeps them for host 2.
        let control = try cluster.control(1)
        for _ in 0..<100 {
            _ = try control.call(ControlCommand.increment(count: 1), as: IncrementResult.self)
        }
        #expect(await waitUntil(.seconds(5), every: .milliseconds(50)) { cluster.counts(3)?[ids[1]!] == 100 })
        // Bounce 2-3 so that host 3's state reaches host 2 at a reconnect too (as before anti-entropy).
        try cluster.lab.setCut(between: 2, and: 3, true)
        #expect(await waitForState(cluster, 2, 3, "reconnecting", ids))
        try cluster.lab.setCut(between: 2, and: 3, false)
        #expect(await waitForState(cluster, 2, 3, "connected", ids))
        #expect(
            await waitUntil(.seconds(5), every: .milliseconds(50)) { cluster.counts(2)?[ids[1]!] == 100 },
            "host 2 gets host 1's count")
        // Heal 1-2: host 1 replays its 100 increments to host 2.
        try cluster.lab.setCut(between: 1, and: 2, false)
        #expect(await waitForState(cluster, 1, 2, "connected", ids))
        for round in 1...2 {
            // Settled: every host counts host 1 at exactly 100, and keeps doing so.
            try await Task.sleep(for: .seconds(1.5))
            let seen = (1...3).map { cluster.counts($0)?[ids[1]!] }
            #expect(seen == [100, 100, 100], "round \(round): hosts 1/2/3 count host 1 at \(seen)")
            // One more reconnect of 1-2.
            try cluster.lab.setCut(between: 1, and: 2, true)
            #expect(await waitForState(cluster, 1, 2, "reconnecting", ids))
            try cluster.lab.setCut(between: 1, and: 2, false)
            #expect(await waitForState(cluster, 1, 2, "connected", ids))
        }
    }

    /// Starts host 1 with its state in /run/small/state and host 2, connected, and counts `count` on host 1 until
    /// host 2 shows it; host 1's peer id.
    func startCounting(_ cluster: Cluster, _ count: Int) async throws -> String {
        try cluster.start(1, stateDirectory: "/run/small/state")
        try cluster.start(2)
        #expect(
            await waitUntil(.seconds(5), every: .milliseconds(50)) {
                cluster.connectedPeers(1) == 1 && cluster.connectedPeers(2) == 1
            })
        let one = try cluster.peerID(1)
        _ = try cluster.client(1, ["increment", "-n", "\(count)"])
        #expect(await waitUntil(.seconds(5), every: .milliseconds(50)) { cluster.counts(2)?[one] == count })
        return one
    }

    @Test("a full disk: the increment fails, nothing is counted anywhere, and the retry counts once")
    func fullDisk() async throws {
        let cluster = try Cluster(hosts: 2)
        // Host 1 keeps its state on a disk of 1 MiB of its own (ext4 in a file, on a loop device): there the count is
        // replaced whole at each save, which needs room.
        for command in [
            ["mkdir", "-p", "/run/small"], ["truncate", "-s", "1M", "/run/small.img"],
            ["mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", "-b", "1024", "/run/small.img"],
            ["mount", "-o", "loop", "/run/small.img", "/run/small"],
        ] {
            let done = try cluster.lab.run(1, command, timeout: 20)
            #expect(done.status == 0, "\(command.joined(separator: " ")): \(done.stderr)")
        }
        defer { _ = try? cluster.lab.run(1, ["umount", "-l", "/run/small"]) }
        let one = try await startCounting(cluster, 5)

        // In blocks of the file system's own size: larger ones stop short of the last few blocks.
        _ = try cluster.lab.run(1, ["dd", "if=/dev/zero", "of=/run/small/fill", "bs=1024"], timeout: 20)
        let failed = try cluster.lab.run(1, [Cluster.client, "increment"], timeout: 10)
        #expect(failed.status != 0, "the increment must fail on a full disk: \(failed.stdout)")
        #expect(failed.stderr.contains("No space left on device"), "\(failed.stderr)")
        #expect(cluster.counts(1)?[one] == 5)
        // Anti-entropy runs every 500 ms: give it three rounds to show whether anything leaked.
        try await Task.sleep(for: .seconds(1.5))
        #expect(cluster.counts(2)?[one] == 5, "host 2 counted an increment that host 1 reported as failed")

        _ = try cluster.lab.run(1, ["rm", "-f", "/run/small/fill"])
        _ = try cluster.client(1, ["increment"])  // the client's retry
        #expect(await waitUntil(.seconds(5), every: .milliseconds(50)) { cluster.counts(2)?[one] == 6 })
        try await Task.sleep(for: .seconds(1))
        #expect(cluster.counts(1)?[one] == 6 && cluster.counts(2)?[one] == 6)
    }

    @Test("a full tmpfs: the count is written over the old one in place, so increments still count, once everywhere")
    func fullMemoryDirectory() async throws {
        let cluster = try Cluster(hosts: 2)
        // Host 1 keeps its state on a tmpfs of 64 KiB of its own.
        _ = try cluster.lab.run(1, ["mkdir", "-p", "/run/small"])
        let mounted = try cluster.lab.run(1, ["mount", "-t", "tmpfs", "-o", "size=64k", "small", "/run/small"])
        #expect(mounted.status == 0, "\(mounted.stderr)")
        let one = try await startCounting(cluster, 9)

        _ = try cluster.lab.run(1, ["dd", "if=/dev/zero", "of=/run/small/fill", "bs=4096"], timeout: 10)
        // 9 → 10 → 11: the count's text grows by a byte, within the page the file already has.
        for _ in 1...2 {
            let done = try cluster.lab.run(1, [Cluster.client, "increment"], timeout: 10)
            #expect(done.status == 0, "\(done.stderr)")
        }
        #expect(await waitUntil(.seconds(5), every: .milliseconds(50)) { cluster.counts(2)?[one] == 11 })
        try await Task.sleep(for: .seconds(1.5))
        #expect(cluster.counts(1)?[one] == 11 && cluster.counts(2)?[one] == 11)
        let saved = try cluster.lab.run(1, ["cat", "/run/small/state/counter"])
        #expect(saved.stdout == "11\n", "the count on the full tmpfs is the one counted")
    }

    @Test("started during a flap: the daemon browses at once, links, and its advertisement recovers")
    func startDuringFlap() async throws {
        let cluster = try Cluster(hosts: 2)
        try cluster.start(1)
        #expect(await waitUntil(.seconds(5), every: .milliseconds(50)) { (try? cluster.peerID(1)) != nil })
        try cluster.start(2)
        try await Task.sleep(for: .milliseconds(300))
        try cluster.lab.setLink(2, up: false)
        try await Task.sleep(for: .milliseconds(2_600))
        try cluster.lab.setLink(2, up: true)
        let upAt = ContinuousClock.now
        #expect(
            await waitUntil(.seconds(10), every: .milliseconds(50)) {
                cluster.connectedPeers(1) == 1 && cluster.connectedPeers(2) == 1
            })
        print("measured: linked \(ContinuousClock.now - upAt) after the link came back")
        let two = try cluster.peerID(2)
        let advertised = await waitUntil(.seconds(15), every: .milliseconds(50)) {
            let listing =
                (try? cluster.lab.run(1, ["avahi-browse", "-rpt", "_lansession._tcp"], timeout: 10))?.stdout ?? ""
            return listing.split(separator: "\n").contains { $0.hasPrefix("=") && $0.contains("\"id=\(two)\"") }
        }
        #expect(advertised, "host 1 never resolved host 2's advertisement")
        print("measured: host 2's advertisement resolved \(ContinuousClock.now - upAt) after the link came back")
    }

    @Test("a forged record with a member's id and a wrong port neither hides nor erases its real address")
    func forgedRecord() async throws {
        let cluster = try await Cluster.mesh(3)
        let ids = try ids(cluster, 1...3)
        let real = "10.77.0.2:47000"
        let forged = "10.77.0.3:47999"
        // Host 3 advertises a record with host 2's id that points at a port nothing listens on.
        let forger = try cluster.lab.spawn(
            3,
            [
                "avahi-publish", "-s", "aaa-forged", "_lansession._tcp", "47999", "v=3", "id=\(ids[2]!)", "s=e2e",
                "u=47999", "n=h2",
            ])
        defer { forger.stop() }
        func endpoints() -> Set<String> {
            Set(cluster.peers(1)[ids[2]!]?["endpoints"] as? [String] ?? [])
        }
        #expect(
            await waitUntil(.seconds(10), every: .milliseconds(50)) { endpoints() == [real, forged] },
            "host 1 knows \(endpoints())")
        // Host 1 loses host 2 and redials: the forged endpoint fails, the real one works.
        try cluster.lab.setCut(between: 1, and: 2, true)
        #expect(await waitForState(cluster, 1, 2, "reconnecting", ids))
        try cluster.lab.setCut(between: 1, and: 2, false)
        #expect(await waitForState(cluster, 1, 2, "connected", ids))
        // The forged record goes away: it takes only its own endpoint.
        forger.stop()
        #expect(
            await waitUntil(.seconds(10), every: .milliseconds(50)) { endpoints() == [real] },
            "host 1 knows \(endpoints())")
        try cluster.lab.setCut(between: 1, and: 2, true)
        #expect(await waitForState(cluster, 1, 2, "reconnecting", ids))
        #expect(endpoints() == [real])
        try cluster.lab.setCut(between: 1, and: 2, false)
        #expect(await waitForState(cluster, 1, 2, "connected", ids))
    }

    @Test("state files that cannot be read back: the daemon refuses to start, names the file, changes nothing")
    func unreadableState() async throws {
        let cluster = try Cluster(hosts: 1)
        // Each case: the file the refusal must name, and a script that makes the state directory "$1".
        let key = "{ printf 'LanSession device key 1\\n'; head -c 64 /dev/urandom; } > \"$1/device-key\""
        let cases: [(file: String, setup: String)] = [
            (
                "device-key",
                "printf 'garbage\\n' > \"$1/device-key\"; chmod 600 \"$1/device-key\"; echo 7 > \"$1/counter\""
            ),
            ("device-key", "\(key); chmod 644 \"$1/device-key\"; echo 7 > \"$1/counter\""),
            ("device-key", ": > \"$1/device-key\"; chmod 600 \"$1/device-key\"; echo 7 > \"$1/counter\""),
            ("counter", "\(key); chmod 600 \"$1/device-key\"; : > \"$1/counter\""),
            ("counter", "\(key); chmod 600 \"$1/device-key\"; echo 12x > \"$1/counter\""),
            ("counter", "\(key); chmod 600 \"$1/device-key\""),
            ("counter", "echo 7 > \"$1/counter\""),
            (
                "trusted-devices.json",
                "\(key); chmod 600 \"$1/device-key\"; echo 0 > \"$1/counter\"; echo '{ half' > \"$1/trusted-devices.json\""
            ),
        ]
        for (index, testCase) in cases.enumerated() {
            let directory = "/run/state-\(index)"
            let made = try cluster.lab.run(
                1, ["sh", "-c", "umask 077; mkdir -p \"$1\"; \(testCase.setup)", "sh", directory])
            #expect(made.status == 0, "case \(index): \(made.stderr)")
            let before = try cluster.lab.run(1, ["sh", "-c", "cat \"$1\"/* 2>/dev/null | sha256sum", "sh", directory])
            let result = try cluster.lab.run(
                1,
                [
                    Cluster.daemon, "--no-discovery", "--state-dir", directory, "--control", "\(directory)/sock",
                    "--port", "0",
                ], timeout: 10)
            let lines = result.stderr.split(separator: "\n")
            #expect(result.status == 1, "case \(index): exit \(result.status), \(result.stderr)")
            #expect(lines.count == 1, "case \(index): one line, got \(result.stderr)")
            #expect(result.stderr.contains("\(directory)/\(testCase.file)"), "case \(index): \(result.stderr)")
            print("measured: case \(index) refused: \(result.stderr.trimmingCharacters(in: .newlines))")
            let after = try cluster.lab.run(1, ["sh", "-c", "cat \"$1\"/* 2>/dev/null | sha256sum", "sh", directory])
            #expect(after.stdout == before.stdout, "case \(index): the state files were changed")
        }
    }
}
