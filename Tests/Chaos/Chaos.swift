import ArgumentParser
import Foundation
import SessionControl
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Exactly once under chaos: N test hosts each count one by one through their daemon's control socket while links
/// flap, daemons are killed with kill -9 and restarted, and an avahi-daemon restarts; then every host must show, for
/// every host, exactly the count that host's own daemon acknowledged.
@main
struct Chaos: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lansession-chaos",
        abstract: "Faults on test hosts while every host counts; checks that nothing is lost or doubled.")

    @Option(help: "Test hosts (3...16).") var hosts = 3
    @Option(help: "Seconds of counting under faults (10...3600).") var seconds = 60
    @Option(help: "Milliseconds between one host's increments.") var interval = 8
    @Option(help: "Seed of the fault schedule (default: random).") var seed: UInt64?
    @Option(help: "Seconds allowed to converge after the last fault.") var convergeWithin = 5.0
    @Flag(help: "Print the result as one JSON object.") var json = false
    @Option(help: "Directory for the daemons' logs (info level), one file per host.") var logs: String?
    @Flag(help: "On failure, leave the lab and its daemons up (until the lab's time to live) to look at them.")
    var keep = false
    @Flag(help: "Also send numbered messages, byte streams and files between every pair of hosts, and check them.")
    var payloads = false
    @Option(help: "With --payloads: milliseconds between one host's messages.") var messageInterval = 40
    @Option(help: "With --payloads: milliseconds between one host's byte streams.") var streamInterval = 2000
    @Option(help: "With --payloads: milliseconds between one host's files.") var fileInterval = 3000
    @Option(help: "With --payloads: each host's link is shaped to this rate (tc tbf), so files take a while.")
    var rate = "40mbit"
    @Option(help: "Soak: run this many hours instead of --seconds (0.01...48), sampling every daemon.")
    var hours: Double?

    /// How long the faults and the traffic go on.
    var duration: Int { hours.map { Int(($0 * 3600).rounded()) } ?? seconds }

    func validate() throws {
        guard (3...16).contains(hosts) else { throw ValidationError("--hosts must be 3...16") }
        guard (10...3600).contains(seconds) else { throw ValidationError("--seconds must be 10...3600") }
        guard (1...1000).contains(interval) else { throw ValidationError("--interval must be 1...1000") }
        guard (1...10_000).contains(messageInterval), (100...600_000).contains(streamInterval),
            (1000...600_000).contains(fileInterval)
        else {
            throw ValidationError(
                "--message-interval must be 1...10000, --stream-interval 100...600000, --file-interval 1000...600000")
        }
        if let hours { guard (0.01...48).contains(hours) else { throw ValidationError("--hours must be 0.01...48") } }
    }

    func run() async throws {
        let seed = self.seed ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        let seconds = duration
        log("seed \(seed); \(hosts) hosts, \(seconds) s\(payloads ? ", with payloads" : "")")
        let lab = try TestLab.up(hosts, ttl: seconds + 600)
        if let logs { try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true) }
        let daemons = Daemons(lab: lab, hosts: hosts, logs: logs)
        var keepLab = false
        defer {
            if !keepLab {
                daemons.stopAll()
                lab.down()
            }
        }
        for host in 1...hosts { try daemons.start(host) }
        let meshStart = ContinuousClock.now
        guard await waitUntil(.seconds(15), every: .milliseconds(100), { daemons.allConnected() }) else {
            throw ValidationError("the hosts did not form a mesh within 15 s")
        }
        log("mesh of \(hosts) in \(ContinuousClock.now - meshStart)")

        let ids = try (1...hosts).map { try daemons.peerID($0) }

        // Counting: a thread per host, one increment at a time; with --payloads, the payloads too.
        let stop = StopFlag()
        if payloads {
            // A file then takes a good part of a second: kill -9 and link flaps land in the middle of transfers.
            for host in 1...hosts {
                let shaped = try lab.run(
                    host,
                    [
                        "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", rate, "burst", "64kb", "latency",
                        "50ms",
                    ])
                guard shaped.status == 0 else { throw ValidationError("tc on host \(host): \(shaped.stderr)") }
            }
        }
        let payloadRun =
            payloads
            ? PayloadRun(
                daemons: daemons, ids: ids, seed: seed, messageInterval: messageInterval,
                streamInterval: streamInterval, fileInterval: fileInterval) : nil
        try await payloadRun?.start(until: stop)
        let drivers = (1...hosts).map { Driver(host: $0, daemons: daemons, interval: interval, stop: stop) }
        let threads = drivers.map { driver in Thread { driver.run() } }
        for thread in threads { thread.start() }

        // Faults until the end of the counting.
        let started = ContinuousClock.now
        let end = started + .seconds(seconds)
        // A soak spares host 1 from kill -9: one daemon lives the whole run, a series long enough to show a leak.
        let schedule = FaultSchedule.make(
            hosts: hosts, seconds: seconds, spare: hours == nil ? nil : 1, random: &random)
        let faults = Faults(lab: lab, daemons: daemons)
        let sampler = hours == nil ? nil : DaemonSampler(daemons: daemons)
        let sampling = sampler.map { sampler in
            Task {
                var tick = 0
                while !Task.isCancelled && ContinuousClock.now < end {
                    let elapsed = Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000
                    let line = sampler.sample(elapsed: elapsed)
                    if tick % 6 == 0 {
                        log(
                            "soak \(Int(elapsed) / 60)m\(Int(elapsed) % 60)s: increments "
                                + "\(drivers.map(\.acknowledgedSoFar).reduce(0, +))"
                                + (payloadRun?.progress ?? "") + " | " + line)
                    }
                    tick += 1
                    try? await Task.sleep(for: .seconds(10))
                }
            }
        }
        await faults.run(schedule, from: started)
        try? await Task.sleep(until: end)
        sampling?.cancel()
        stop.raise()
        for driver in drivers { driver.finished.wait() }
        if let payloadRun, !payloadRun.waitForSenders(timeout: .seconds(90)) {
            log("payload senders still busy 90 s after traffic stopped")
        }
        let lastIncrement = ContinuousClock.now
        let lastFault = max(faults.lastFaultEnded ?? started, lastIncrement)
        log("counting stopped; last fault ended \(lastIncrement - (faults.lastFaultEnded ?? started)) before")

        // Convergence: every host shows every host's acknowledged count.
        let expected = Dictionary(uniqueKeysWithValues: drivers.map { ($0.host, $0.acknowledged) })
        var views: [Int: [String: UInt64]] = [:]
        var locals: [Int: UInt64] = [:]
        let deadline = lastIncrement + .seconds(30)
        var convergedAt: ContinuousClock.Instant?
        while ContinuousClock.now < deadline {
            views = daemons.views()
            locals = Dictionary(
                uniqueKeysWithValues: (1...hosts).compactMap { host in
                    views[host]?[ids[host - 1]].map { (host, $0) }
                })
            let agreed = (1...hosts).allSatisfy { viewer in
                (1...hosts).allSatisfy { owner in views[viewer]?[ids[owner - 1]] == expected[owner] }
            }
            if agreed {
                convergedAt = ContinuousClock.now
                break
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        let afterFault = convergedAt.map { $0 - lastFault }
        let afterIncrement = convergedAt.map { $0 - lastIncrement }
        let countsPassed = afterFault.map { $0 <= .seconds(convergeWithin) } ?? false
        let payloadReport = await payloadRun?.settle(timeout: .seconds(20))
        let soak = sampler?.verdict()
        let passed = countsPassed && (payloadReport?.passed ?? true) && (soak?.passed ?? true)
        let report = Report(
            seed: seed, hosts: hosts, seconds: seconds,
            acknowledged: (1...hosts).map { expected[$0]! }, failedRequests: drivers.map(\.failed),
            inDoubtResolved: drivers.map(\.resolved), locals: (1...hosts).map { locals[$0] },
            views: (1...hosts).map { viewer in (1...hosts).map { views[viewer]?[ids[$0 - 1]] } },
            flaps: faults.flaps, kills: faults.kills, avahiRestarts: faults.avahiRestarts,
            convergedAfterLastFaultMs: afterFault.map(Self.milliseconds),
            convergedAfterLastIncrementMs: afterIncrement.map(Self.milliseconds), payloads: payloadReport, soak: soak,
            passed: passed)
        report.print(json: json)
        if !passed {
            for host in 1...hosts {
                let peers = daemons.call(host, ControlCommand.peers, as: [PeerResult].self) ?? []
                log(
                    "host \(host) (\(ids[host - 1])) sees: "
                        + peers.map { "\($0.peerID) \($0.state) \($0.endpoints)" }.joined(separator: "; "))
            }
            if keep {
                keepLab = true
                log("keeping lab \(lab.name) and its daemons for 10 minutes (or until interrupted)")
                try? await Task.sleep(for: .seconds(600))
            }
            throw ExitCode(1)
        }
    }

    static func milliseconds(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }
}

func log(_ text: String) {
    let time = Date().formatted(.iso8601.time(includingFractionalSeconds: true))
    FileHandle.standardError.write(Data("chaos: \(time) \(text)\n".utf8))
}
