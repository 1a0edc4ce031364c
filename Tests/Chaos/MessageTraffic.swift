import Foundation
import SessionControl
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Numbered data messages from every host to every other, through `send` (reliable; every fourth durable), and what
/// each receiver's `watch` saw of them; then the check: per sender and receiver, no number twice, none out of order,
/// and every acknowledged one delivered unless a kill -9 of either end explains the gap (for a durable one, only the
/// receiver's watcher being away does: it is on the sender's disk, and goes again after a restart of either end).
final class MessageTraffic: Sendable {
    /// A sender and a receiver.
    struct Pair: Hashable, Sendable {
        var from: Int
        var to: Int
    }

    private struct Attempt {
        var seq: Int
        var started: ContinuousClock.Instant
        /// Sent durable (`channel: durable`).
        var durable = false
        /// The daemon answered ok: the message is on the receiver's channel.
        var acknowledged = false
        /// The daemon answered with an error: nothing was sent.
        var refused = false
    }

    private struct Receipt {
        var seq: Int
        var at: ContinuousClock.Instant
    }

    private struct State {
        var attempts: [Pair: [Attempt]] = [:]
        var receipts: [Pair: [Receipt]] = [:]
        /// Messages whose text names another receiver than the host whose watcher saw them.
        var misdelivered = 0
        var refusals: [String: Int] = [:]
        /// When each sender's watcher saw each receiver connect (`peerConnected`, or a link of it turn active).
        var connected: [Pair: [ContinuousClock.Instant]] = [:]
        /// When each sender's watcher saw each receiver lost (`peerLost`): from then on until it is back, what is sent
        /// to it is kept and never written, so it reaches its next incarnation.
        var lost: [Pair: [ContinuousClock.Instant]] = [:]
    }

    let daemons: Daemons
    let ids: [String]
    let interval: Int
    private let state = Mutex(State())

    init(daemons: Daemons, ids: [String], interval: Int) {
        self.daemons = daemons
        self.ids = ids
        self.interval = interval
    }

    /// Every fourth message of a sender to a receiver goes durable.
    static func isDurable(_ seq: Int) -> Bool { seq % 4 == 0 }

    static func text(_ pair: Pair, seq: Int) -> String { "chaos h\(pair.from)>h\(pair.to) #\(seq)" }

    /// What a watcher on host `host` saw: a data event with `text`.
    func received(_ text: String, on host: Int) {
        guard text.hasPrefix("chaos h") else { return }
        let parts = text.dropFirst("chaos h".count).split(whereSeparator: { ">h #".contains($0) })
        guard parts.count == 3, let from = Int(parts[0]), let to = Int(parts[1]), let seq = Int(parts[2]) else {
            return
        }
        state.withLock { state in
            guard to == host else {
                state.misdelivered += 1
                return
            }
            state.receipts[Pair(from: from, to: to), default: []].append(Receipt(seq: seq, at: .now))
        }
    }

    /// What a watcher on host `host` saw: `peer` connected, or one of its links became the active one.
    func connected(_ peer: String, on host: Int) {
        guard let index = ids.firstIndex(of: peer) else { return }
        state.withLock { $0.connected[Pair(from: host, to: index + 1), default: []].append(.now) }
    }

    /// What a watcher on host `host` saw: `peer` lost (no link to it is left).
    func lost(_ peer: String, on host: Int) {
        guard let index = ids.firstIndex(of: peer) else { return }
        state.withLock { $0.lost[Pair(from: host, to: index + 1), default: []].append(.now) }
    }

    /// Sends host `host`'s messages, one at a time, to each other host in turn, until `stop`.
    func send(from host: Int, until stop: StopFlag) {
        var client: ControlClient?
        var seqs = [Int: Int]()
        var next = 0
        let others = (1...daemons.hosts).filter { $0 != host }
        while !stop.isRaised {
            if client == nil {
                client = try? ControlClient(path: (try? daemons.socketPath(host)) ?? "")
                // A send waits while the receiver's replay buffer is full: give it time rather than abandon it (an
                // abandoned send still runs in the daemon and could be overtaken by the next one).
                client?.setReadTimeout(seconds: 60)
                if client == nil {
                    usleep(50_000)
                    continue
                }
            }
            guard let connected = client else { continue }
            let to = others[next % others.count]
            next += 1
            let pair = Pair(from: host, to: to)
            let seq = seqs[to, default: 0] + 1
            seqs[to] = seq
            let index = state.withLock { state in
                state.attempts[pair, default: []].append(Attempt(seq: seq, started: .now, durable: Self.isDurable(seq)))
                return state.attempts[pair]!.count - 1
            }
            let request = ControlCommand.send(
                data: Data(Self.text(pair, seq: seq).utf8), peer: ids[to - 1],
                channel: Self.isDurable(seq) ? .durable : .reliable)
            do {
                try connected.send(request)
                let line = try connected.readLine()
                let head = try? JSONDecoder().decode(ReplyHead.self, from: line)
                let ok = head?.ok ?? false
                state.withLock {
                    $0.attempts[pair]![index].acknowledged = ok
                    $0.attempts[pair]![index].refused = !ok
                    if !ok { $0.refusals[String((head?.error ?? "unreadable reply").prefix(40)), default: 0] += 1 }
                }
            } catch {
                client = nil  // the daemon went away: the message's fate is unknown (not acknowledged)
            }
            usleep(UInt32(interval * 1000))
        }
    }

    /// The counts, and whether every acknowledged message is delivered or explained (false while some are not).
    func check(timeline: Timeline) -> MessageCounts {
        let now = ContinuousClock.now
        return state.withLock { state in
            var counts = MessageCounts()
            counts.misdelivered = state.misdelivered
            counts.refusals = state.refusals
            let start = state.attempts.values.compactMap(\.first?.started).min() ?? now
            var restartGaps: [(gap: String, count: Int, from: Double, to: Double)] = []
            for (pair, attempts) in state.attempts {
                let receipts = state.receipts[pair] ?? []
                counts.sent += attempts.count
                counts.acked += attempts.filter(\.acknowledged).count
                counts.refused += attempts.filter(\.refused).count
                counts.durable.sent += attempts.filter(\.durable).count
                counts.durable.acked += attempts.filter { $0.durable && $0.acknowledged }.count
                var seen = Set<Int>()
                var highest = 0
                // Each number seen, in order, with when it was first seen.
                var firstSeen: [Receipt] = []
                for receipt in receipts {
                    if seen.contains(receipt.seq) {
                        counts.doubled += 1
                        counts.examples.append("\(Self.text(pair, seq: receipt.seq)) twice")
                    } else if receipt.seq < highest {
                        counts.reordered += 1
                        counts.examples.append("\(Self.text(pair, seq: receipt.seq)) after #\(highest)")
                    }
                    if !seen.contains(receipt.seq) { firstSeen.append(receipt) }
                    highest = max(highest, receipt.seq)
                    seen.insert(receipt.seq)
                }
                counts.delivered += seen.count
                counts.durable.delivered += seen.filter(Self.isDurable).count
                firstSeen.sort { $0.seq < $1.seq }
                let traffic = attempts.first?.started ?? now
                for attempt in attempts where attempt.acknowledged && !seen.contains(attempt.seq) {
                    // The gap runs from the receipt of the last number below it that the receiver saw (of a message
                    // that is not durable) to the receipt of the first one above it (or now).
                    var low = 0
                    var high = firstSeen.count
                    while low < high {
                        let middle = (low + high) / 2
                        if firstSeen[middle].seq < attempt.seq { low = middle + 1 } else { high = middle }
                    }
                    // A durable message may reach a restarted receiver again from the sender's log, after the kill
                    // that took the messages around it: only the in-order channel's arrivals bound the gap's start.
                    let since = firstSeen[..<low].last { !Self.isDurable($0.seq) }?.at ?? traffic
                    let until = low < firstSeen.count ? firstSeen[low].at : now
                    // The sender's daemon was killed after the send began and before the gap closed: its replay
                    // buffer went with it.
                    let senderKilled = timeline.started(
                        .daemonDown, host: pair.from, within: attempt.started, until)
                    // The receiver's daemon was killed within the gap, and the message was sent before the sender saw
                    // the old incarnation lost (or, when it never saw that, before it saw the new one connect): it
                    // may have been written to the old one and died with it. What is sent after the sender saw it
                    // lost is never written to the old one and goes to the new one (docs/wire-format.md, 11.5).
                    let receiverKilled = timeline.spans(.daemonDown, host: pair.to, startingWithin: since, until)
                        .contains { kill in
                            let restarted = kill.to ?? now
                            let reconnected = state.connected[pair]?.first { $0 > restarted }
                            let seenLost = state.lost[pair]?.first { $0 > kill.from && $0 < (reconnected ?? now) }
                            return (seenLost ?? reconnected).map { attempt.started < $0 } ?? true
                        }
                    // The receiver's watcher was not subscribed at some moment between the send and the end of the
                    // gap: the message may have arrived then.
                    let unwatched = timeline.overlaps(.watcherAway, host: pair.to, attempt.started, until)
                    if attempt.durable, unwatched {
                        counts.missedByWatcher += 1
                        counts.durable.missedByWatcher += 1
                    } else if attempt.durable {
                        // On the sender's disk: no restart explains its loss.
                        counts.lost += 1
                        counts.durable.lost += 1
                        if senderKilled { counts.durable.lostWithSenderKilled += 1 }
                        if counts.examples.count < 20 {
                            counts.examples.append("\(Self.text(pair, seq: attempt.seq)) (durable) lost")
                        }
                    } else if senderKilled || receiverKilled || unwatched {
                        counts.lostToRestart += 1
                        if senderKilled { counts.lostToSenderRestart += 1 }
                        if receiverKilled { counts.lostToReceiverRestart += 1 }
                        if unwatched { counts.missedByWatcher += 1 }
                        // One line per gap: the numbers missing between two that arrived.
                        let gap = "h\(pair.from)>h\(pair.to) after #\(low > 0 ? firstSeen[low - 1].seq : 0)"
                        if let last = restartGaps.last, last.gap == gap {
                            restartGaps[restartGaps.count - 1].count += 1
                        } else {
                            restartGaps.append(
                                (gap, 1, Self.seconds(since - start), Self.seconds(until - start)))
                        }
                    } else {
                        counts.lost += 1
                        if counts.examples.count < 20 {
                            counts.examples.append("\(Self.text(pair, seq: attempt.seq)) lost")
                        }
                    }
                }
            }
            counts.examples = Array(counts.examples.prefix(20))
            counts.restartGaps = restartGaps.prefix(20).map {
                "\($0.gap): \($0.count) missing, seen \($0.from) s and \($0.to) s into the traffic"
            }
            return counts
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        (Double(duration / .milliseconds(1)) / 100).rounded() / 10
    }

    private struct ReplyHead: Decodable {
        var ok: Bool
        var error: String?
    }
}

/// What became of the data messages.
struct MessageCounts: Encodable {
    /// `send` requests made.
    var sent = 0
    /// Answered ok: on the receiver's channel.
    var acked = 0
    /// Answered with an error: nothing sent.
    var refused = 0
    /// Distinct messages a receiver's watcher saw.
    var delivered = 0
    /// Seen twice by the receiver.
    var doubled = 0
    /// Seen after a higher number of the same sender.
    var reordered = 0
    /// Acknowledged, never seen, with no kill -9 of either end to explain it.
    var lost = 0
    /// Acknowledged, never seen, explained by a kill -9 of the sender or the receiver (see --help).
    var lostToRestart = 0
    /// Of those, how many each explanation covers (one message may have several).
    var lostToSenderRestart = 0
    var lostToReceiverRestart = 0
    var missedByWatcher = 0
    /// Seen by a host they were not sent to.
    var misdelivered = 0
    /// Some of what went wrong, for people.
    var examples: [String] = []
    /// Why `send` was refused (the start of the error), and how often.
    var refusals: [String: Int] = [:]
    /// The first 20 gaps counted as lostToRestart: after which number, how many, and between which receipts.
    var restartGaps: [String] = []
    /// Of all these, the durable messages (every fourth of each sender to each receiver).
    var durable = DurableCounts()

    struct DurableCounts: Encodable {
        var sent = 0
        var acked = 0
        var delivered = 0
        /// Acknowledged and never seen, with no watcher away to explain it (counted in `lost` too).
        var lost = 0
        /// Of those, with the sender killed within the gap: what the durable log is for (must be 0).
        var lostWithSenderKilled = 0
        /// Acknowledged, never seen, the receiver's watcher away meanwhile.
        var missedByWatcher = 0
    }

    var passed: Bool { doubled == 0 && reordered == 0 && lost == 0 && misdelivered == 0 }
}
