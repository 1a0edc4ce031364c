import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// A long-lived subscription on one host's control socket (`watch` or `streams`): connects, and connects again
/// after its daemon was killed and restarted, handing every line to `handle`; the time it is away is on the
/// timeline as `away`.
final class Listener: @unchecked Sendable {
    let host: Int
    let command: ControlCommand
    let away: Timeline.Kind
    let daemons: Daemons
    let handle: @Sendable (Data) -> Void
    private let lock = NSLock()
    private var connected = false

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

    /// Runs on its own thread until `stop` (it may stay blocked in a read afterwards; it holds nothing).
    func start(until stop: StopFlag) {
        Thread.detachNewThread { [self] in
            while !stop.isRaised {
                guard let client = try? ControlClient(path: (try? daemons.socketPath(host)) ?? "") else {
                    usleep(20_000)
                    continue
                }
                do {
                    try client.send(command)
                    _ = try client.readLine()  // {"ok":true,"result":{}}: subscribed
                    lock.withLock { connected = true }
                    daemons.timeline.end(away, host: host)
                    while !stop.isRaised { handle(try client.readLine()) }
                } catch {
                    lock.withLock { connected = false }
                    daemons.timeline.begin(away, host: host)
                }
            }
        }
    }
}
