import ArgumentParser
import Foundation
import SessionControl
import Synchronization
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

/// The daemons of the lab: started, killed and restarted by pid, asked through their control sockets.
final class Daemons: Sendable {
    let lab: TestLab
    let hosts: Int
    let logs: String?
    /// Kills and restarts, for the payload checks.
    let timeline = Timeline()
    private let processes = Mutex<[Int: HostProcess]>([:])
    private let holders = Mutex<[Int: Int32]>([:])

    init(lab: TestLab, hosts: Int, logs: String?) {
        self.lab = lab
        self.hosts = hosts
        self.logs = logs
    }

    func start(_ host: Int) throws {
        var command = [
            TestLab.binDirectory + "/sessiond", "--admission", "open", "--name", "h\(host)", "--session", "chaos",
            "--port", "47000",
            "--state-dir", "/run/lansession-state", "--log-level", logs == nil ? "notice" : "info",
        ]
        if let logs {
            // The shell execs the daemon with stderr appended to the host's log: the pid stays the daemon's.
            command = ["sh", "-c", "exec \"$0\" \"$@\" 2>>'\(logs)/h\(host).log'"] + command
        }
        let process = try lab.spawn(host, command)
        processes.withLock { $0[host] = process }
        timeline.end(.daemonDown, host: host)
    }

    /// kill -9, and waits until the process is gone.
    func kill9(_ host: Int) {
        guard let process = processes.withLock({ $0.removeValue(forKey: host) }) else { return }
        timeline.begin(.daemonDown, host: host)
        kill(process.pid, SIGKILL)
        process.stop()  // reaps it
    }

    /// The pid of host `host`'s daemon, while it runs.
    func pid(_ host: Int) -> Int32? {
        processes.withLock { $0[host]?.pid }
    }

    /// `path` inside host `host` (its own /run, say), as this machine sees it.
    func path(_ host: Int, _ path: String) throws -> String {
        "/proc/\(try holderPID(host))/root\(path)"
    }

    private func holderPID(_ host: Int) throws -> Int32 {
        if let pid = holders.withLock({ $0[host] }) { return pid }
        let pid = try lab.holderPID(host)
        holders.withLock { $0[host] = pid }
        return pid
    }

    func stopAll() {
        for process in processes.withLock({ Array($0.values) }) { process.stop() }
    }

    func socketPath(_ host: Int) throws -> String {
        try path(host, "/run/lansession/sessiond.sock")
    }

    func call<Result: Decodable>(_ host: Int, _ request: ControlCommand, as type: Result.Type) -> Result? {
        guard let client = try? ControlClient(path: try socketPath(host)) else { return nil }
        client.setReadTimeout(seconds: 5)
        return try? client.call(request, as: type)
    }

    func peerID(_ host: Int) throws -> String {
        guard let status = call(host, ControlCommand.status, as: StatusResult.self) else {
            throw ValidationError("host \(host) does not answer")
        }
        return status.peerID
    }

    func allConnected() -> Bool {
        (1...hosts).allSatisfy {
            call($0, ControlCommand.status, as: StatusResult.self)?.peers == hosts - 1
        }
    }

    /// Every host's counts by peer id, its own included.
    func views() -> [Int: [String: UInt64]] {
        var views: [Int: [String: UInt64]] = [:]
        for host in 1...hosts {
            guard let counter = call(host, ControlCommand.counter, as: CounterResult.self),
                let status = call(host, ControlCommand.status, as: StatusResult.self)
            else { continue }
            var view = counter.peers.mapValues(\.count)
            view[status.peerID] = counter.local
            views[host] = view
        }
        return views
    }
}

/// Sends one host's increments one at a time and counts those its daemon acknowledged.
///
/// When the daemon dies with a request in flight, the request's fate is read back from the daemon's own count once
/// it answers again: committed (saved, hence sent) or not. A count that matches neither is a failure of the run.
final class Driver: @unchecked Sendable {
    let host: Int
    let daemons: Daemons
    let interval: Int
    let stop: StopFlag
    let finished = DispatchSemaphore(value: 0)
    // Read after `finished` is signalled.
    private(set) var acknowledged: UInt64 = 0
    private let soFar = Atomic<UInt64>(0)
    /// Acknowledged so far, while it runs.
    var acknowledgedSoFar: UInt64 { soFar.load(ordering: .relaxed) }
    private(set) var failed = 0
    private(set) var resolved = 0

    init(host: Int, daemons: Daemons, interval: Int, stop: StopFlag) {
        self.host = host
        self.daemons = daemons
        self.interval = interval
        self.stop = stop
    }

    func run() {
        defer { finished.signal() }
        var client: ControlClient?
        var inDoubt = false
        while !stop.isRaised {
            if client == nil {
                client = try? ControlClient(path: (try? daemons.socketPath(host)) ?? "")
                client?.setReadTimeout(seconds: 5)
                guard let connected = client else {
                    usleep(50_000)
                    continue
                }
                if inDoubt {
                    guard let counter = try? connected.call(ControlCommand.counter, as: CounterResult.self)
                    else {
                        client = nil
                        continue
                    }
                    if counter.local == acknowledged + 1 {
                        acknowledged += 1
                        resolved += 1
                    } else if counter.local != acknowledged {
                        log("host \(host): its count is \(counter.local), \(acknowledged) were acknowledged")
                    }
                    inDoubt = false
                }
            }
            guard let connected = client else { continue }
            do {
                try connected.send(ControlCommand.increment(count: 1))
                inDoubt = true
                let line = try connected.readLine()
                inDoubt = false
                let head = try JSONDecoder().decode(ReplyHead.self, from: line)
                if head.ok { acknowledged += 1 } else { failed += 1 }
                soFar.store(acknowledged, ordering: .relaxed)
            } catch {
                client = nil  // the daemon went away (or the reply never came): resolve on reconnect
            }
            usleep(UInt32(interval * 1000))
        }
        // A request still in doubt at the end is settled from the daemon's own count.
        let deadline = ContinuousClock.now + .seconds(15)
        while inDoubt && ContinuousClock.now < deadline {
            if let counter = daemons.call(host, ControlCommand.counter, as: CounterResult.self) {
                if counter.local == acknowledged + 1 {
                    acknowledged += 1
                    resolved += 1
                }
                inDoubt = false
            } else {
                usleep(100_000)
            }
        }
    }

    private struct ReplyHead: Decodable {
        var ok: Bool
    }
}

/// Tells the drivers to stop.
final class StopFlag: Sendable {
    private let flag = Atomic(false)
    var isRaised: Bool { flag.load(ordering: .relaxed) }
    func raise() { flag.store(true, ordering: .relaxed) }

    /// Sleeps `milliseconds`, or less once the flag is raised; true when it was not.
    func pause(milliseconds: Int) -> Bool {
        var left = milliseconds
        while left > 0 && !isRaised {
            usleep(UInt32(min(left, 100) * 1000))
            left -= 100
        }
        return !isRaised
    }
}

/// What happens when: flaps of each host's link, kill -9 and restart of daemons, one avahi-daemon restart.
struct FaultSchedule {
    enum Fault {
        case flap(host: Int, down: Duration)
        case kill(host: Int, restartAfter: Duration)
        case restartAvahi(host: Int)
    }

    var faults: [(at: Duration, fault: Fault)] = []

    /// `spare`: a host whose daemon is never killed.
    static func make(hosts: Int, seconds: Int, spare: Int? = nil, random: inout SplitMix64) -> FaultSchedule {
        var schedule = FaultSchedule()
        let last = Double(seconds)  // faults go on until the counting stops
        // Flaps: each host's link goes down for 0.3...3 s, one flap at a time per host.
        var busyUntil = [Double](repeating: 1, count: hosts + 1)
        var time = 1.0
        while time < last {
            let host = Int.random(in: 1...hosts, using: &random)
            let down = Double.random(in: 0.3...3, using: &random)
            if busyUntil[host] <= time && time + down < last {
                schedule.faults.append((.milliseconds(Int(time * 1000)), .flap(host: host, down: .seconds(down))))
                busyUntil[host] = time + down + 0.3
            }
            time += Double.random(in: 0.3...1.2, using: &random)
        }
        // kill -9: about one every 15 s, restarted 0.5...2 s later.
        let kills = max(1, seconds / 15)
        for index in 0..<kills {
            let at = Double(seconds) * (Double(index) + 0.5) / Double(kills)
            guard at + 2 < last else { continue }
            let candidates = (1...hosts).filter { $0 != spare }
            schedule.faults.append(
                (
                    .milliseconds(Int(at * 1000)),
                    .kill(
                        host: candidates.randomElement(using: &random)!,
                        restartAfter: .seconds(Double.random(in: 0.5...2, using: &random)))
                ))
        }
        // One avahi-daemon restart, at a third of the run, on a host whose link then stays up (avahi 0.8 can stay
        // stuck in its own registration when its interface goes away while it starts: avahi/avahi#233).
        let restartAt = Double(seconds) / 3
        let avahiHost = Int.random(in: 1...hosts, using: &random)
        schedule.faults.removeAll {
            if case .flap(avahiHost, let down) = $0.fault {
                let start = Double($0.at / .milliseconds(1)) / 1000
                return start < restartAt + 3 && start + Double(down / .milliseconds(1)) / 1000 > restartAt - 0.5
            }
            return false
        }
        schedule.faults.append((.milliseconds(Int(restartAt * 1000)), .restartAvahi(host: avahiHost)))
        schedule.faults.sort { $0.at < $1.at }
        return schedule
    }
}

/// Carries out a fault schedule.
final class Faults: Sendable {
    let lab: TestLab
    let daemons: Daemons
    private let state = Mutex<(flaps: Int, kills: Int, avahi: Int, lastEnded: ContinuousClock.Instant?)>((0, 0, 0, nil))

    init(lab: TestLab, daemons: Daemons) {
        self.lab = lab
        self.daemons = daemons
    }

    var flaps: Int { state.withLock { $0.flaps } }
    var kills: Int { state.withLock { $0.kills } }
    var avahiRestarts: Int { state.withLock { $0.avahi } }
    var lastFaultEnded: ContinuousClock.Instant? { state.withLock { $0.lastEnded } }

    private func ended() {
        state.withLock { $0.lastEnded = ContinuousClock.now }
    }

    func run(_ schedule: FaultSchedule, from start: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            for (at, fault) in schedule.faults {
                try? await Task.sleep(until: start + at)
                group.addTask { await self.carryOut(fault) }
            }
        }
    }

    private func carryOut(_ fault: FaultSchedule.Fault) async {
        switch fault {
        case .flap(let host, let down):
            state.withLock { $0.flaps += 1 }
            do {
                try lab.setLink(host, up: false)
                try? await Task.sleep(for: down)
                try lab.setLink(host, up: true)
            } catch {
                log("flap of host \(host): \(error)")
            }
            log("host \(host): link down \(down)")
            ended()
        case .kill(let host, let restartAfter):
            state.withLock { $0.kills += 1 }
            daemons.kill9(host)
            log("host \(host): kill -9")
            try? await Task.sleep(for: restartAfter)
            do {
                try daemons.start(host)
            } catch {
                log("restarting host \(host): \(error)")
            }
            log("host \(host): restarted after \(restartAfter)")
            ended()
        case .restartAvahi(let host):
            state.withLock { $0.avahi += 1 }
            do {
                try lab.avahi(host, "restart")
            } catch {
                log("avahi restart on host \(host): \(error)")
            }
            log("host \(host): avahi-daemon restarted")
            ended()
        }
    }
}

/// The outcome of a run.
struct Report: Encodable {
    var seed: UInt64
    var hosts: Int
    var seconds: Int
    /// Per host: increments its own daemon acknowledged (in-doubt ones resolved included).
    var acknowledged: [UInt64]
    /// Per host: requests answered with an error (nothing counted).
    var failedRequests: [Int]
    /// Per host: requests in flight when the daemon died, found committed afterwards.
    var inDoubtResolved: [Int]
    /// Per host: its daemon's own count at the end.
    var locals: [UInt64?]
    /// views[i][j]: host i+1's count of host j+1.
    var views: [[UInt64?]]
    var flaps: Int
    var kills: Int
    var avahiRestarts: Int
    /// From the end of the last fault or the last increment, whichever came later.
    var convergedAfterLastFaultMs: Int?
    var convergedAfterLastIncrementMs: Int?
    /// With --payloads: what became of the messages, streams and files.
    var payloads: PayloadReport?
    /// With --hours: memory and descriptors per daemon incarnation.
    var soak: SoakVerdict?
    var passed: Bool

    func print(json: Bool) {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            Swift.print(String(decoding: try! encoder.encode(self), as: UTF8.self))
            return
        }
        Swift.print(
            "seed \(seed): \(hosts) hosts, \(seconds) s, \(flaps) link flaps, \(kills) kill -9, "
                + "\(avahiRestarts) avahi-daemon restart")
        Swift.print(
            "host  acknowledged  own count  failed  in doubt  seen by "
                + (1...hosts).map { "h\($0)" }.joined(separator: " "))
        for host in 1...hosts {
            let seen = (0..<hosts).map { views[$0][host - 1].map(String.init) ?? "?" }.joined(separator: " ")
            Swift.print(
                "h\(host)    \(acknowledged[host - 1])  \(locals[host - 1].map(String.init) ?? "?")  "
                    + "\(failedRequests[host - 1])  \(inDoubtResolved[host - 1])  \(seen)")
        }
        let total = acknowledged.reduce(0, +)
        Swift.print(
            "total acknowledged \(total); every host shows "
                + (0..<hosts).map { viewer in
                    views[viewer].contains(nil) ? "?" : String(views[viewer].compactMap { $0 }.reduce(0, +))
                }.joined(separator: " / "))
        if let after = convergedAfterLastFaultMs, let afterIncrement = convergedAfterLastIncrementMs {
            Swift.print(
                "converged \(after) ms after the last fault (or increment, if later), \(afterIncrement) ms after the "
                    + "last increment")
        } else {
            Swift.print("did NOT converge within 30 s of the last increment")
        }
        payloads?.print()
        if let soak {
            for series in soak.judged {
                Swift.print(
                    "\(series.daemon): \(series.samples) samples, RSS \(series.rssKiB[0]) -> \(series.rssKiB[1]) KiB, anon "
                        + "\(series.anonKiB[0]) -> \(series.anonKiB[1]) KiB, "
                        + "fds \(series.fds[0]) -> \(series.fds[1]) (medians of the 2nd and last quarter), CPU "
                        + "\(String(format: "%.1f", series.cpuSeconds)) s\(series.grew ? ": GREW" : "")")
            }
            Swift.print("\(soak.shortSeries) incarnations too short to judge")
        }
        Swift.print(passed ? "PASS: nothing lost, nothing doubled" : "FAIL")
    }
}
