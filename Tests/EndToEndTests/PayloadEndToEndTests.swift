import Foundation
import SessionControl
import TestSupport
import Testing

/// Applications' payloads between real daemons on test hosts: data messages, and a big file pushed while the counter
/// keeps going.
@Suite(
    "data and files between daemons on test hosts", .serialized,
    .disabled(if: TestLab.unavailableReason != nil, Comment(rawValue: TestLab.unavailableReason ?? ""))
)
struct PayloadEndToEndTests {
    @Test("100 data messages from host 1 arrive at host 2 in order; one sent to all reaches hosts 2 and 3 only once")
    func dataInOrder() async throws {
        let cluster = try await Cluster.mesh(3)
        let two = try cluster.watch(2)
        let three = try cluster.watch(3)
        defer {
            two.stop()
            three.stop()
        }
        try await Task.sleep(for: .milliseconds(300))
        let control = try cluster.control(1)
        for index in 0..<100 {
            let result = try control.call(
                ControlCommand.send(data: Data("message \(index)".utf8), peer: "h2"), as: SendResult.self)
            #expect(result.peers.count == 1)
        }
        let everyone = try cluster.client(1, ["send", "--all", "--text", "to everyone"]) as? [String: Any]
        #expect((everyone?["peers"] as? [Any])?.count == 2)
        func texts(_ watcher: HostProcess) -> [String] {
            watcher.events.filter { $0["event"] as? String == "data" }.compactMap { $0["text"] as? String }
        }
        _ = try cluster.client(1, ["send", "--all", "--text", "last"])
        // In order: once "last" is in, a doubled message would be in too.
        let arrived = await waitUntil(.seconds(10), every: .milliseconds(50)) {
            texts(two).last == "last" && texts(three).last == "last"
        }
        #expect(arrived, "host 2 saw \(texts(two).count) messages, host 3 \(texts(three).count)")
        #expect(texts(two) == (0..<100).map { "message \($0)" } + ["to everyone", "last"])
        #expect(texts(three) == ["to everyone", "last"])
        let stamped = two.events.first { $0["event"] as? String == "data" }?["time"] as? String
        #expect(stamped?.hasSuffix("Z") == true, "watch events carry a UTC timestamp: \(stamped ?? "none")")
        // An unknown peer is refused with the members listed.
        let refused = try cluster.lab.run(
            1, [Cluster.client, "send", "nobody", "--text", "x"], timeout: 10)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("h2") && refused.stderr.contains("h3"), "members listed: \(refused.stderr)")
    }

    @Test(
        "host 2 away past host 1's --delivery-timeout: a push to it fails with the reason; data already sent arrives, once, when it is back"
    )
    func awayPastTheDeliveryTimeout() async throws {
        let cluster = try Cluster(hosts: 2)
        try cluster.start(1, extra: ["--delivery-timeout", "2"])
        try cluster.start(2)
        #expect(await waitUntil(.seconds(10), every: .milliseconds(50)) { cluster.connectedPeers(1) == 1 })
        let two = try cluster.watch(2)
        defer { two.stop() }
        let file = try cluster.lab.run(1, ["sh", "-c", "head -c 1000000 /dev/urandom > /run/away.bin"])
        #expect(file.status == 0)
        try cluster.lab.setLink(2, up: false)
        defer { try? cluster.lab.setLink(2, up: true) }
        #expect(await waitUntil(.seconds(5), every: .milliseconds(50)) { cluster.connectedPeers(1) == 0 })
        let away = ContinuousClock.now
        _ = try cluster.client(1, ["send", "h2", "--text", "sent while away"])
        let push = try cluster.lab.run(1, [Cluster.client, "push", "/run/away.bin", "--to", "h2"], timeout: 20)
        let failedAfter = ContinuousClock.now - away
        print("measured: a push to a member away failed \(failedAfter) after it went (delivery timeout 2 s)")
        #expect(push.status != 0, "the push to an absent member did not fail")
        #expect(push.stderr.contains("away"), "\(push.stderr)")
        #expect(failedAfter < .seconds(5))
        try cluster.lab.setLink(2, up: true)
        func texts() -> [String] {
            two.events.filter { $0["event"] as? String == "data" }.compactMap { $0["text"] as? String }
        }
        let arrived = await waitUntil(.seconds(10), every: .milliseconds(50)) { !texts().isEmpty }
        #expect(arrived)
        // It learns that the transfer failed; nothing is half done on either side.
        #expect(
            await waitUntil(.seconds(5), every: .milliseconds(50)) {
                two.events.contains { event in
                    (event["transfer"] as? [String: Any])?["phase"] as? String == "failed"
                }
            }, "host 2 was not told: \(two.events.filter { $0["event"] as? String == "transfer" })")
        #expect(texts() == ["sent while away"])
        for host in 1...2 {
            let underWay = try cluster.control(host).call(
                ControlCommand.transfers, as: [TransferResult].self)
            #expect(underWay.isEmpty, "host \(host) has transfers under way: \(underWay)")
        }
    }

    @Test("a 200 MB file pushed from host 1 lands on host 2 intact, with progress, while increments keep flowing")
    func bigPush() async throws {
        let cluster = try await Cluster.mesh(3)
        let size = 200_000_000
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(cluster.lab.name)-payload.bin")
        defer { try? FileManager.default.removeItem(at: file) }
        let made = try cluster.lab.run(
            1, ["sh", "-c", "head -c \(size) /dev/urandom > \(file.path) && sha256sum \(file.path)"], timeout: 60)
        let digest = String(made.stdout.prefix(64))
        #expect(digest.count == 64, "\(made.stderr)")

        // Host 1's link shaped to 1 Gbit/s as a LAN would limit it: the 200 MB take 1.6 s at least, so that the
        // pings and increments below surely overlap the transfer, however fast the machine.
        _ = try cluster.lab.run(
            1,
            ["tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", "1gbit", "burst", "256kb", "latency", "20ms"],
            timeout: 10)
        // Baseline, same hosts, same run, same link: a raw TCP copy of the file into host 2's /run.
        let raw = try await rawCopy(cluster, file: file.path)
        print(
            String(
                format: "measured: raw TCP copy host 1 → host 2 at 1 Gbit/s: %.3f s, %.1f MB/s", raw,
                Double(size) / raw / 1e6))

        // Small messages before and during the transfer: round trips of pings, and increments.
        let idle = try cluster.client(1, ["bench", "--peer", "h2", "--count", "300"]) as? [String: Any]
        let watcher = try cluster.watch(2, seconds: 120)
        defer { watcher.stop() }
        try await Task.sleep(for: .milliseconds(300))
        let push = try cluster.lab.spawn(1, [Cluster.client, "--json", "push", file.path, "--to", "h2"])
        defer { push.stop() }
        let started = await push.waitFor(timeout: 30) { $0["phase"] as? String == "started" }
        #expect(started != nil, "the transfer did not start: \(push.stderr)")
        // Pings (a second client) and increments (this one) while the file flows.
        let pinging = try cluster.lab.spawn(1, [Cluster.client, "--json", "bench", "--peer", "h2", "--count", "100"])
        defer { pinging.stop() }
        let control = try cluster.control(1)
        var increments = 0
        while !push.events.contains(where: { $0["phase"] as? String == "finished" }) && push.exitStatus == -1
            && increments < 2000
        {
            _ = try control.call(ControlCommand.increment(), as: IncrementResult.self)
            increments += 1
        }
        #expect(increments > 0, "increments were made during the transfer")
        let busy = await pinging.waitFor(timeout: 60) { $0["p50_us"] != nil }
        let finished = await push.waitFor(timeout: 180) { $0["phase"] as? String == "finished" }
        let result = try #require(finished, "no finished line: \(push.events.last ?? [:]) \(push.stderr)")
        #expect(result["sha256"] as? String == digest)
        let progressLines = push.events.filter { $0["phase"] as? String == "inProgress" }.count
        #expect(progressLines >= 1, "progress lines while it ran")
        let landed = try cluster.lab.run(
            2, ["sha256sum", "\(Cluster.stateDirectory)/inbox/\(file.lastPathComponent)"], timeout: 60)
        #expect(String(landed.stdout.prefix(64)) == digest, "the file on host 2 has the sender's SHA-256")
        let received = await watcher.waitFor(timeout: 10) {
            $0["event"] as? String == "transfer"
                && ($0["transfer"] as? [String: Any])?["phase"] as? String == "finished"
        }
        #expect(received != nil, "host 2's watch saw the transfer finish")
        // Every increment made during the transfer reached host 2.
        let own = try cluster.peerID(1)
        let caughtUp = await waitUntil(.seconds(5), every: .milliseconds(50)) {
            (cluster.counts(2)?[own] ?? 0) == increments
        }
        #expect(caughtUp, "host 2 counts \(cluster.counts(2)?[own] ?? -1) of host 1's \(increments) increments")

        let seconds = result["seconds"] as? Double ?? 0
        let rate = result["megabytesPerSecond"] as? Double ?? 0
        print(
            String(
                format: "measured: push 200 MB host 1 → host 2 at 1 Gbit/s: %.3f s, %.1f MB/s, %.2f× the raw copy",
                seconds, rate,
                raw / max(seconds, 0.001)))
        print(
            "measured: ping RTT to host 2 idle p50 \(idle?["p50_us"] ?? "?") µs p99 \(idle?["p99_us"] ?? "?") µs; "
                + "during the transfer p50 \(busy?["p50_us"] ?? "?") µs p99 \(busy?["p99_us"] ?? "?") µs "
                + "max \(busy?["max_us"] ?? "?") µs; \(increments) increments during it, all arrived")
        let busyP99 = busy?["p99_us"] as? Double ?? .infinity
        #expect(busyP99 < 50_000, "small messages wait behind the transfer: p99 \(busyP99) µs")
    }

    @Test("a file streamed from host 1 arrives byte-exact while host 2 listens; with nobody listening it is declined")
    func byteStream() async throws {
        let cluster = try await Cluster.mesh(2)
        let made = try cluster.lab.run(
            1, ["sh", "-c", "head -c 3000000 /dev/urandom > /run/stream.bin && sha256sum /run/stream.bin"], timeout: 30)
        let digest = String(made.stdout.prefix(64))
        #expect(digest.count == 64, "\(made.stderr)")

        // Nobody takes streams on host 2 yet: the stream is declined there and the sender hears why.
        let refused = try cluster.lab.run(
            1, [Cluster.client, "stream", "/run/stream.bin", "--to", "h2"], timeout: 30)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("declined"), "\(refused.stderr)")

        let listener = try cluster.lab.spawn(2, [Cluster.client, "--json", "streams", "--count", "2"])
        defer { listener.stop() }
        try await Task.sleep(for: .milliseconds(300))
        let sent =
            try cluster.client(1, ["stream", "/run/stream.bin", "--to", "h2", "--name", "capture"])
            as? [String: Any]
        #expect(sent?["sha256"] as? String == digest)
        #expect(sent?["bytes"] as? Int == 3_000_000)
        let opened = await listener.waitFor(timeout: 10) { $0["phase"] as? String == "opened" }
        #expect(opened?["name"] as? String == "capture")
        let finished = await listener.waitFor(timeout: 10) { $0["phase"] as? String != "opened" }
        #expect(finished?["phase"] as? String == "finished", "\(finished ?? [:])")
        #expect(finished?["sha256"] as? String == digest)
        #expect(finished?["bytes"] as? Int == 3_000_000)
        #expect(finished?["direction"] as? String == "receiving")
    }

    /// scripts/lib/raw-copy.py, the raw TCP copy `scripts/bench push` compares with too.
    static let rawCopyProgram = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/lib/raw-copy.py").path

    /// Copies `file` from host 1 to host 2 over one TCP connection (sendfile, then recv into a file in host 2's
    /// /run); returns the receiver's seconds from accept to the last byte written and synced.
    func rawCopy(_ cluster: Cluster, file: String) async throws -> Double {
        let receiver = try cluster.lab.spawn(
            2, ["python3", Self.rawCopyProgram, "receive", "47100", "/run/raw-copy.bin"])
        defer { receiver.stop() }
        guard await receiver.waitFor(timeout: 10, { $0["listening"] != nil }) != nil else {
            throw TestLabError("raw receiver did not listen: \(receiver.stderr)")
        }
        let sent = try cluster.lab.run(
            1, ["python3", Self.rawCopyProgram, "send", try cluster.lab.address(2), "47100", file], timeout: 120)
        guard sent.status == 0 else { throw TestLabError("raw sender failed: \(sent.stderr)") }
        guard let done = await receiver.waitFor(timeout: 30, { $0["seconds"] != nil }),
            let seconds = done["seconds"] as? Double
        else {
            throw TestLabError("raw receiver did not finish: \(receiver.stderr)")
        }
        return seconds
    }
}
