import Foundation
import SessionControl
import TestSupport

/// `--payloads`: numbered messages, byte streams and files between every pair of hosts while the faults happen, the
/// listeners that see them arrive, and the checks once traffic stopped.
final class PayloadRun: Sendable {
    let daemons: Daemons
    let messages: MessageTraffic
    let streams: StreamTraffic
    let files: FileTraffic
    private let listening = StopFlag()
    private let listeners: [Listener]
    private let finished = DispatchSemaphore(value: 0)

    init(daemons: Daemons, ids: [String], seed: UInt64, messageInterval: Int, streamInterval: Int, fileInterval: Int) {
        self.daemons = daemons
        let messages = MessageTraffic(daemons: daemons, ids: ids, interval: messageInterval)
        let streams = StreamTraffic(daemons: daemons, ids: ids, interval: streamInterval, seed: seed)
        self.messages = messages
        self.streams = streams
        files = FileTraffic(daemons: daemons, ids: ids, interval: fileInterval, seed: seed)
        let timeline = daemons.timeline
        listeners =
            (1...daemons.hosts).map { host in
                Listener(host: host, command: .watch(), away: .watcherAway, daemons: daemons) { line in
                    guard let event = try? JSONDecoder().decode(ControlEvent.self, from: line) else { return }
                    switch event {
                    case .data(_, let data, _):
                        if let text = String(validating: data, as: UTF8.self) { messages.received(text, on: host) }
                    case .peerConnected(let peer, _), .linkChanged(let peer, _, _, "active"):
                        // A link to the peer became its active one (after a restart of the peer: to its new
                        // incarnation); a restart that is quicker than the loss of the old link shows only so.
                        messages.connected(peer, on: host)
                    case .peerLost(let peer):
                        messages.lost(peer, on: host)
                    case .eventsMissed(let count, let restarted) where count > 0 || restarted:
                        // Events this watcher never got: as if it had been away for an instant (right after it
                        // resumed, the listener counts the whole time it was away).
                        timeline.begin(.watcherAway, host: host)
                        timeline.end(.watcherAway, host: host)
                    default: break
                    }
                }
            }
            + (1...daemons.hosts).map { host in
                Listener(host: host, command: .streams, away: .streamListenerAway, daemons: daemons) { line in
                    streams.reported(line)
                }
            }
    }

    /// Subscribes on every host, then starts every host's senders until `stop`.
    func start(until stop: StopFlag) async throws(TestLabError) {
        for listener in listeners { listener.start(until: listening) }
        guard await waitUntil(.seconds(10), every: .milliseconds(50), { listeners.allSatisfy(\.isConnected) }) else {
            throw TestLabError("the listeners did not subscribe within 10 s")
        }
        for host in 1...daemons.hosts {
            let senders: [@Sendable () -> Void] = [
                { self.messages.send(from: host, until: stop) },
                { self.streams.send(from: host, until: stop) },
                { self.files.send(from: host, until: stop) },
            ]
            for sender in senders {
                Thread.detachNewThread {
                    sender()
                    self.finished.signal()
                }
            }
        }
    }

    /// The counts so far, for a soak's lines.
    var progress: String {
        let m = messages.check(timeline: daemons.timeline)
        let s = streams.check(timeline: daemons.timeline)
        let f = files.counts(partialsLeft: 0)
        return ", messages \(m.sent) sent \(m.acked) acked \(m.delivered) delivered, streams \(s.started) started "
            + "\(s.completed) completed, files \(f.files) made \(f.finished) finished"
    }

    /// Waits for the senders to stop (the file under way may take up to `files.settle`); false on timeout.
    func waitForSenders(timeout: Duration) -> Bool {
        let deadline = DispatchTime.now() + .milliseconds(Int(timeout / .milliseconds(1)))
        for _ in 0..<(3 * daemons.hosts) where finished.wait(timeout: deadline) == .timedOut { return false }
        return true
    }

    /// Waits up to `timeout` for every payload to be delivered or explained and for no transfer to be under way;
    /// then checks, and stops the listeners.
    func settle(timeout: Duration) async -> PayloadReport {
        let timeline = daemons.timeline
        var transfersLeft = 0
        _ = await waitUntil(timeout, every: .milliseconds(250)) {
            transfersLeft = (1...daemons.hosts).reduce(0) { sum, host in
                sum + (daemons.call(host, ControlCommand.transfers, as: [TransferResult].self)?.count ?? 1)
            }
            return messages.check(timeline: timeline).lost == 0 && streams.check(timeline: timeline).lost == 0
                && transfersLeft == 0
        }
        let (_, partials) = files.sweepInboxes()
        var fileCounts = files.counts(partialsLeft: partials)
        fileCounts.transfersLeft = transfersLeft
        var watches = WatchResumptions()
        for listener in listeners {
            let counts = listener.resumptions
            watches.resumed += counts.resumed
            watches.acrossRestart += counts.acrossRestart
            watches.missedWithinRun += counts.missedWithinRun
        }
        let report = PayloadReport(
            messages: messages.check(timeline: timeline), streams: streams.check(timeline: timeline),
            files: fileCounts, watches: watches)
        listening.raise()
        return report
    }
}

/// What became of the payloads.
struct PayloadReport: Encodable {
    var messages: MessageCounts
    var streams: StreamCounts
    var files: FileCounts
    var watches: WatchResumptions

    var passed: Bool { messages.passed && streams.passed && files.passed }

    func print() {
        let m = messages
        Swift.print(
            "messages: sent \(m.sent), acked \(m.acked), refused \(m.refused), delivered \(m.delivered), doubled "
                + "\(m.doubled), reordered \(m.reordered), lost \(m.lost), lostToRestart \(m.lostToRestart) (sender killed "
                + "\(m.lostToSenderRestart), receiver killed \(m.lostToReceiverRestart), watcher away "
                + "\(m.missedByWatcher)), misdelivered \(m.misdelivered)")
        let d = m.durable
        Swift.print(
            "  of them durable: sent \(d.sent), acked \(d.acked), delivered \(d.delivered), lost \(d.lost) (sender "
                + "killed \(d.lostWithSenderKilled)), watcher away \(d.missedByWatcher)")
        let w = watches
        Swift.print(
            "  watchers: resumed \(w.resumed) times with since (\(w.acrossRestart) across a restart of their daemon), "
                + "events missed within a daemon's run \(w.missedWithinRun)")
        let s = streams
        Swift.print(
            "streams: started \(s.started), sent \(s.sent), opened \(s.opened), completed \(s.completed), failed "
                + "\(s.failed), wrong bytes \(s.wrongBytes), doubled \(s.doubled), lost \(s.lost), lostToRestart "
                + "\(s.lostToRestart)")
        let f = files
        Swift.print(
            "files: \(f.files) files, \(f.pushes) pushes (\(f.failedPushes) failed), finished \(f.finished), verified "
                + "\(f.verified), resumed \(f.filesResumed), missing \(f.missing), wrong bytes \(f.wrongBytes), "
                + "abandoned \(f.abandoned), extra copies \(f.extraCopies), partials left \(f.partialsLeft), transfers "
                + "left \(f.transfersLeft)")
        for (reason, count) in m.refusals.sorted(by: { $0.value > $1.value }) {
            Swift.print("  \(count) sends refused: \(reason)")
        }
        for gap in m.restartGaps { Swift.print("  lost to a restart: \(gap)") }
        for (reason, count) in f.failureReasons.sorted(by: { $0.value > $1.value }) {
            Swift.print("  \(count) pushes failed: \(reason)")
        }
        for example in m.examples + s.examples + f.examples { Swift.print("  \(example)") }
    }
}
