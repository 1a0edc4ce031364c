import Foundation
import SessionControl
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Byte streams of random bytes from every host to every other, through `stream`, and what each receiver's `streams`
/// listener reported; then the check: a stream either arrives byte-exact or ends with a failure on at least one side.
final class StreamTraffic: Sendable {
    private enum Outcome {
        case pending
        case sent(sha256: String)
        case failed(String)
    }

    private struct Sent {
        var from: Int
        var to: Int
        var size: Int
        var sha256: String
        var started: ContinuousClock.Instant
        var outcome = Outcome.pending
    }

    private struct State {
        var sent: [String: Sent] = [:]
        /// The receivers' last reports (finished or failed), in order, by stream name.
        var ends: [String: [StreamResult]] = [:]
        var opened = 0
    }

    let daemons: Daemons
    let ids: [String]
    let interval: Int
    let seed: UInt64
    private let state = Mutex(State())

    init(daemons: Daemons, ids: [String], interval: Int, seed: UInt64) {
        self.daemons = daemons
        self.ids = ids
        self.interval = interval
        self.seed = seed
    }

    /// A line of host `host`'s `streams` listener.
    func reported(_ line: Data) {
        guard let report = try? JSONDecoder().decode(StreamResult.self, from: line), report.name.hasPrefix("chaos-")
        else { return }
        state.withLock { state in
            if report.phase == "opened" {
                state.opened += 1
            } else {
                state.ends[report.name, default: []].append(report)
            }
        }
    }

    /// Sends host `host`'s streams, one at a time, to each other host in turn, until `stop`.
    func send(from host: Int, until stop: StopFlag) {
        let others = (1...daemons.hosts).filter { $0 != host }
        var random = SplitMix64(seed: seed &+ UInt64(host) &* 0x1000_0000)
        var number = 0
        while stop.pause(milliseconds: interval) {
            let to = others[number % others.count]
            number += 1
            let name = "chaos-h\(host)-h\(to)-\(number).stream"
            let size = Int.random(in: 64 * 1024...1024 * 1024, using: &random)
            guard let file = try? daemons.path(host, "/run/chaos/\(name)"),
                let sha256 = try? PayloadFile.write(count: size, seed: random.next(), to: file),
                let client = try? ControlClient(path: try daemons.socketPath(host))
            else { continue }  // the daemon is down
            defer { unlink(file) }
            client.setReadTimeout(seconds: 60)
            state.withLock {
                $0.sent[name] = Sent(from: host, to: to, size: size, sha256: sha256, started: .now)
            }
            let outcome: Outcome
            do {
                try client.send(ControlCommand.stream(path: "/run/chaos/\(name)", peer: ids[to - 1]))
                let line = try client.readLine()
                if let result = try? JSONDecoder().decode(Reply.self, from: line), result.ok,
                    let digest = result.result?.sha256
                {
                    outcome = .sent(sha256: digest)
                } else {
                    let error = (try? JSONDecoder().decode(Reply.self, from: line))?.error
                    outcome = .failed(error ?? "unreadable reply")
                }
            } catch {
                outcome = .failed("\(error)")  // the daemon went away: the app saw the stream fail
            }
            state.withLock { $0.sent[name]?.outcome = outcome }
        }
    }

    /// The counts: wrong bytes, a stream finished twice, or one sent whose receiver never reported an end without a
    /// kill -9 of either end (or the receiver's listener away) since it started, fail the run.
    func check(timeline: Timeline) -> StreamCounts {
        let now = ContinuousClock.now
        return state.withLock { state in
            var counts = StreamCounts()
            counts.opened = state.opened
            for (name, sent) in state.sent {
                counts.started += 1
                let ends = state.ends[name] ?? []
                let finished = ends.filter { $0.phase == "finished" }
                if finished.count > 1 {
                    counts.doubled += 1
                    counts.examples.append("\(name) finished \(finished.count) times")
                }
                for end in finished where end.sha256 != sent.sha256 || end.bytes != UInt64(sent.size) {
                    counts.wrongBytes += 1
                    counts.examples.append(
                        "\(name): \(end.bytes) bytes, SHA-256 \(end.sha256 ?? "?") where \(sent.size) bytes, "
                            + "\(sent.sha256) were sent")
                }
                if case .sent(let digest) = sent.outcome {
                    counts.sent += 1
                    if digest != sent.sha256 {
                        counts.wrongBytes += 1
                        counts.examples.append("\(name): the sender read SHA-256 \(digest), not \(sent.sha256)")
                    }
                }
                if !finished.isEmpty {
                    counts.completed += 1
                    continue
                }
                let failedHere: Bool
                if case .sent = sent.outcome { failedHere = false } else { failedHere = true }
                if failedHere || !ends.isEmpty {
                    counts.failed += 1
                    continue
                }
                // Sent, and the receiver said nothing of it: only a kill or the listener's absence explains that.
                let explained =
                    timeline.started(.daemonDown, host: sent.from, within: sent.started, now)
                    || timeline.overlaps(.daemonDown, host: sent.to, sent.started, now)
                    || timeline.overlaps(.streamListenerAway, host: sent.to, sent.started, now)
                if explained {
                    counts.lostToRestart += 1
                } else {
                    counts.lost += 1
                    counts.examples.append("\(name): sent, never reported by the receiver")
                }
            }
            counts.examples = Array(counts.examples.prefix(20))
            return counts
        }
    }

    private struct Reply: Decodable {
        var ok: Bool
        var result: StreamResult?
        var error: String?
    }
}

/// What became of the byte streams.
struct StreamCounts: Encodable {
    /// `stream` requests made.
    var started = 0
    /// Answered ok: every byte and the end on the receiver's channel.
    var sent = 0
    /// Reported opened by a receiver's listener.
    var opened = 0
    /// Reported finished by the receiver with the sender's bytes (count and SHA-256).
    var completed = 0
    /// Ended with a failure reported on at least one side, and never finished.
    var failed = 0
    /// Reported finished with other bytes than were sent.
    var wrongBytes = 0
    /// Reported finished more than once.
    var doubled = 0
    /// Sent, never reported by the receiver, explained by a kill -9 of either end or the listener's absence.
    var lostToRestart = 0
    /// Sent, never reported by the receiver, nothing to explain it.
    var lost = 0
    var examples: [String] = []

    var passed: Bool { wrongBytes == 0 && doubled == 0 && lost == 0 }
}
