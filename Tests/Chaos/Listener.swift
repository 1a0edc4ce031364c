import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// A long-lived subscription on one host's control socket (`watch` or `streams`): connects, and connects again
/// after its daemon was killed and restarted, handing every line to `handle`; the time it is away is on the
/// timeline as `away`.
///
/// A `watch` listener resumes: it connects again with `since` (the number of the last event it handed on) and the
/// daemon's run, and the daemon replays what came meanwhile. Its time away counts only when events were missed for
/// good: when the daemon says so first after the reply (`eventsMissed` with a count, or `restarted`: what the killed
/// daemon had not written yet died with it; the whole time away), or when the numbers skip one (the moment of the
/// skip).
final class Listener: @unchecked Sendable {
    let host: Int
    let command: ControlCommand
    let away: Timeline.Kind
    let daemons: Daemons
    let handle: @Sendable (Data) -> Void
    private let lock = NSLock()
    private var connected = false

    /// Where a `watch` listener resumes from: the daemon's run and the number of the last event handed on.
    private var position = WatchPosition()
    /// When the connection was lost, and when it was back, until the first line after the reply says whether events
    /// were missed.
    private var lost: ContinuousClock.Instant?
    private var reconnected: ContinuousClock.Instant?
    /// How a `watch` listener's resumptions went: how many, how many found another run of the daemon (a restart), and
    /// how many events it missed within one run (numbers skipped, or gone from the daemon's history).
    private var counts = WatchResumptions()

    init(
        host: Int, command: ControlCommand, away: Timeline.Kind, daemons: Daemons,
        handle: @escaping @Sendable (Data) -> Void
    ) {
        self.host = host
        self.command = command
        self.away = away
        self.daemons = daemons
        self.handle = handle
        daemons.timeline.begin(away, host: host)
    }

    /// Whether it is subscribed now.
    var isConnected: Bool { lock.withLock { connected } }

    /// How its resumptions went so far.
    var resumptions: WatchResumptions { lock.withLock { counts } }

    /// Whether it resumes where it was when it connects again (`watch`).
    private var resumes: Bool {
        if case .watch = command { return true }
        return false
    }

    /// Runs on its own thread until `stop` (it may stay blocked in a read afterwards; it holds nothing).
    func start(until stop: StopFlag) {
        Thread.detachNewThread { [self] in
            while !stop.isRaised {
                guard let client = try? ControlClient(path: (try? daemons.socketPath(host)) ?? "") else {
                    usleep(20_000)
                    continue
                }
                do {
                    try client.send(request)
                    let reply = try client.readLine()  // {"ok":true,"result":{...}}: subscribed
                    lock.withLock { connected = true }
                    subscribed(reply)
                    while !stop.isRaised {
                        let line = try client.readLine()
                        if resumes { numbered(line) }
                        handle(line)
                    }
                } catch {
                    lock.withLock { connected = false }
                    if resumes, position.run != nil {
                        lost = lost ?? .now  // away for good only if the daemon says so
                    } else {
                        daemons.timeline.begin(away, host: host)
                    }
                }
            }
        }
    }

    /// The request: `watch` again after the last event handed on, when it had one.
    private var request: ControlCommand { resumes ? position.request : command }

    /// Takes the reply: the run, and where the events start when it did not know.
    private func subscribed(_ reply: Data) {
        if resumes, let result = try? JSONDecoder().decode(ControlReply<WatchResult>.self, from: reply).result {
            position.subscribed(result)
            if lost != nil {
                reconnected = .now
                lock.withLock { counts.resumed += 1 }
            }
        }
        daemons.timeline.end(away, host: host)
    }

    /// Follows the numbers of a `watch` listener's events: a number skipped, or events the daemon says are gone
    /// (right after a reply: for the whole time away), are time away.
    private func numbered(_ line: Data) {
        let timeline = daemons.timeline
        defer { (lost, reconnected) = (nil, nil) }
        let skipped = position.took(line)
        if skipped > 0, lost == nil {
            timeline.begin(away, host: host)  // numbers skipped: what they were is missed
            timeline.end(away, host: host)
            lock.withLock { counts.missedWithinRun += Int(skipped) }
        }
        // Another run's: what the killed one had not written yet died with it.
        guard case .eventsMissed(let count, let restarted)? = try? JSONDecoder().decode(ControlEvent.self, from: line),
            count > 0 || restarted
        else { return }
        lock.withLock {
            if !restarted {
                counts.missedWithinRun += Int(count)
            } else if lost != nil {
                counts.acrossRestart += 1
            }
        }
        guard let lost else { return }
        timeline.begin(away, host: host, at: lost)
        timeline.end(away, host: host, at: reconnected ?? .now)
    }
}

/// How a `watch` listener's resumptions went.
struct WatchResumptions: Encodable {
    /// Connections made again after one was lost, with `since`.
    var resumed = 0
    /// Of those, the ones that found a new run of the daemon (restarted after kill -9): what it had not written died
    /// with it.
    var acrossRestart = 0
    /// Events missed while the daemon kept running (told by `eventsMissed`, or numbers skipped): 0 unless a watcher
    /// stayed away for longer than the daemon's history.
    var missedWithinRun = 0
}
