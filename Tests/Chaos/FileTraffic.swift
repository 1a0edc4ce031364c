import Foundation
import SessionControl
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Files of a few MB from every host to every other through `push`, pushed again after a failure until they arrive
/// (resuming from the receiver's partial file); then the check: every file reported finished is in the receiver's
/// inbox with the sender's SHA-256, and every file either finished or is still failing when traffic stops.
final class FileTraffic: Sendable {
    private struct File {
        var from: Int
        var to: Int
        var size: Int
        var sha256: String
        var attempts = 0
        var failures = 0
        var resumed = false
        var finished = false
        /// The receiver's copy was read back and matched.
        var verified = false
        var lastFailure: String?
    }

    private struct State {
        var files: [String: File] = [:]
        var problems: [String] = []
        var wrongBytes = 0
        var missing = 0
        var copies = 0
        /// Why pushes failed, and how often.
        var reasons: [String: Int] = [:]
    }

    let daemons: Daemons
    let ids: [String]
    let interval: Int
    let seed: UInt64
    /// How long after traffic stops a file that keeps failing is pushed again.
    let settle: Duration
    private let state = Mutex(State())

    init(daemons: Daemons, ids: [String], interval: Int, seed: UInt64, settle: Duration = .seconds(30)) {
        self.daemons = daemons
        self.ids = ids
        self.interval = interval
        self.seed = seed
        self.settle = settle
    }

    static let inbox = "/run/lansession-state/inbox"

    /// Sends host `host`'s files, one at a time, to each other host in turn, until `stop`; the file under way when
    /// it is raised is pushed again until it arrives or `settle` has passed.
    func send(from host: Int, until stop: StopFlag) {
        let others = (1...daemons.hosts).filter { $0 != host }
        var random = SplitMix64(seed: seed &+ UInt64(host) &* 0x2000_0000)
        var number = 0
        while stop.pause(milliseconds: interval) {
            let to = others[number % others.count]
            number += 1
            let name = "chaos-h\(host)-h\(to)-\(number).bin"
            let size = Int.random(in: 2_000_000...4_000_000, using: &random)
            guard let path = try? daemons.path(host, "/run/chaos/\(name)"),
                let sha256 = try? PayloadFile.write(count: size, seed: random.next(), to: path)
            else { continue }
            defer { unlink(path) }
            state.withLock { $0.files[name] = File(from: host, to: to, size: size, sha256: sha256) }
            var deadline: ContinuousClock.Instant?
            while true {
                if stop.isRaised && deadline == nil { deadline = .now + settle }
                if let deadline, ContinuousClock.now > deadline { break }
                if push(name, from: host, to: to) { break }
                usleep(500_000)
            }
        }
    }

    /// One push of `name`; true once it is finished (and checked).
    private func push(_ name: String, from host: Int, to: Int) -> Bool {
        guard let client = try? ControlClient(path: try daemons.socketPath(host)) else { return false }
        client.setReadTimeout(seconds: 30)
        state.withLock { $0.files[name]?.attempts += 1 }
        func failed(_ reason: String) -> Bool {
            state.withLock {
                $0.files[name]?.failures += 1
                $0.files[name]?.lastFailure = reason
                $0.reasons[String(reason.prefix(80)), default: 0] += 1
            }
            return false
        }
        do {
            try client.send(ControlCommand.push(path: "/run/chaos/\(name)", peer: ids[to - 1], name: name))
            while true {
                let line = try client.readLine()
                guard let reply = try? JSONDecoder().decode(Reply.self, from: line) else {
                    return failed("unreadable reply")
                }
                guard reply.ok, let transfer = reply.result else { return failed(reply.error ?? "no result") }
                if transfer.resumedFrom > 0 { state.withLock { $0.files[name]?.resumed = true } }
                guard transfer.phase == "finished" else { continue }
                verify(name, reported: transfer.sha256)
                return true
            }
        } catch {
            return failed("\(error)")  // the daemon went away, or no progress for 30 s
        }
    }

    /// A file reported finished: its SHA-256 and the receiver's copy must be the sender's; the copy is removed then.
    private func verify(_ name: String, reported: String?) {
        guard let file = state.withLock({ $0.files[name] }) else { return }
        let copy = try? daemons.path(file.to, "\(Self.inbox)/\(name)")
        let received = copy.flatMap { PayloadFile.sha256(ofFileAt: $0) }
        state.withLock { state in
            state.files[name]?.finished = true
            if reported != file.sha256 {
                state.wrongBytes += 1
                state.problems.append("\(name): push reported SHA-256 \(reported ?? "none"), sent \(file.sha256)")
            }
            switch received {
            case nil:
                state.missing += 1
                state.problems.append("\(name): reported finished, not in h\(file.to)'s inbox")
            case file.sha256:
                state.files[name]?.verified = true
            case let other?:
                state.wrongBytes += 1
                state.problems.append("\(name): h\(file.to)'s copy has SHA-256 \(other), sent \(file.sha256)")
            }
        }
        if let copy, received != nil { unlink(copy) }
    }

    /// After traffic stopped: every host's inbox holds only right copies of the tool's files (a second copy of a
    /// file is fine: its sender was killed before it heard of the first), and what partial files are left.
    func sweepInboxes() -> (copies: Int, partials: Int) {
        var copies = 0
        var partials = 0
        for host in 1...daemons.hosts {
            guard let inbox = try? daemons.path(host, Self.inbox),
                let names = try? FileManager.default.contentsOfDirectory(atPath: inbox)
            else { continue }
            for entry in names {
                if entry.hasPrefix(".partial-") {
                    partials += 1
                    continue
                }
                guard entry.hasPrefix("chaos-") else { continue }
                // "chaos-h1-h2-3 (2).bin" is a second copy of "chaos-h1-h2-3.bin".
                let base = entry.replacingOccurrences(of: #" \(\d+\)\.bin$"#, with: ".bin", options: .regularExpression)
                let sha256 = PayloadFile.sha256(ofFileAt: "\(inbox)/\(entry)")
                state.withLock { state in
                    copies += 1
                    if let file = state.files[base], sha256 != file.sha256 {
                        state.wrongBytes += 1
                        state.problems.append(
                            "\(entry) in h\(host)'s inbox: SHA-256 \(sha256 ?? "?"), sent \(file.sha256)")
                    }
                }
                unlink("\(inbox)/\(entry)")
            }
        }
        state.withLock { $0.copies += copies }
        return (copies, partials)
    }

    func counts(partialsLeft: Int) -> FileCounts {
        state.withLock { state in
            var counts = FileCounts()
            counts.extraCopies = state.copies
            counts.wrongBytes = state.wrongBytes
            counts.missing = state.missing
            counts.partialsLeft = partialsLeft
            counts.failureReasons = state.reasons
            counts.examples = Array(state.problems.prefix(20))
            for (name, file) in state.files {
                counts.files += 1
                counts.pushes += file.attempts
                counts.failedPushes += file.failures
                if file.resumed { counts.filesResumed += 1 }
                if file.finished {
                    counts.finished += 1
                    if file.verified { counts.verified += 1 }
                } else {
                    counts.abandoned += 1
                    counts.examples.append("\(name) never finished: \(file.lastFailure ?? "no push answered")")
                }
            }
            counts.examples = Array(counts.examples.prefix(20))
            return counts
        }
    }

    private struct Reply: Decodable {
        var ok: Bool
        var result: TransferResult?
        var error: String?
    }
}

/// What became of the files.
struct FileCounts: Encodable {
    /// Files made and pushed.
    var files = 0
    /// `push` requests, first ones and again after a failure.
    var pushes = 0
    /// Pushes that ended with an error or a lost connection.
    var failedPushes = 0
    /// Files of which a push resumed from a partial file (`resumedFrom` > 0).
    var filesResumed = 0
    /// Files reported finished.
    var finished = 0
    /// Of them, found in the receiver's inbox with the sender's SHA-256.
    var verified = 0
    /// Reported finished, not in the receiver's inbox.
    var missing = 0
    /// Reported, or found, with other bytes than were sent.
    var wrongBytes = 0
    /// Files still failing when pushing stopped (traffic over and the settling time passed).
    var abandoned = 0
    /// Second copies found in inboxes (the sender was killed after the receiver had the file: pushed again).
    var extraCopies = 0
    /// Partial files left in the inboxes at the end.
    var partialsLeft = 0
    /// Transfers still under way on some host at the end (`transfers`).
    var transfersLeft = 0
    /// Why pushes failed (the start of the error), and how often.
    var failureReasons: [String: Int] = [:]
    var examples: [String] = []

    var passed: Bool {
        missing == 0 && wrongBytes == 0 && abandoned == 0 && transfersLeft == 0 && partialsLeft <= abandoned
    }
}
