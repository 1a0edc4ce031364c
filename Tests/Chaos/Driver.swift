import Foundation
import SessionControl
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
