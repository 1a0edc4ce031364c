import Foundation
import LanSession
import LanSessionRFCOMM
import SessionControl
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

extension Check {
    /// Two daemons with `--transport le` and LE discovery, no LAN and no address given: each advertises and scans,
    /// they find each other and link; 1,000 increments exactly once; a bubble moved each way; the one that stops
    /// (and withdraws its advertisement) is lost by the other within the discovery's timeout.
    func leDiscovery(_ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter) async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        let a = try Daemon("da", ["--transport", "le", "--bt-adapter", "hci0", "--le-psm", "\(0x93)"], discovery: true)
        let b = try Daemon("db", ["--transport", "le", "--bt-adapter", "hci1", "--le-psm", "\(0x94)"], discovery: true)
        defer {
            a.stop()
            b.stop()
        }
        let started = ContinuousClock.now
        let linked = await waitUntil(.seconds(40), every: .milliseconds(100)) { a.connected == 1 && b.connected == 1 }
        let linkedAfter = ContinuousClock.now - started
        guard linked, let idA = a.peerID, let idB = b.peerID else {
            a.stop()
            b.stop()
            let lines = (a.process.stderr + b.process.stderr).split(separator: "\n").filter {
                $0.contains("LE") || $0.contains("dial") || $0.contains("error") || $0.contains("warning")
            }
            return [
                Outcome(
                    check: "LE discovery: found and linked", passed: false,
                    detail: "not connected after \(linkedAfter); logs: \(lines.suffix(30).joined(separator: " | "))")
            ]
        }
        let links = a.links(to: idB).map(\.transport)
        let alone = links == ["le"]

        log("LE discovery: linked after \(linkedAfter)")
        // 1,000 increments from a, 3 moves of bubble 1 by a and of bubble 2 by b.
        let controlA = try a.client()
        let controlB = try b.client()
        for _ in 0..<1_000 {
            _ = try controlA.call(ControlCommand.increment(count: 1), as: IncrementResult.self)
        }
        let counted = await waitUntil(.seconds(30), every: .milliseconds(100)) { b.count(of: idA) == 1_000 }
        try? await Task.sleep(for: .seconds(1))
        let final = b.count(of: idA)
        outcomes.append(
            Outcome(
                check: "LE discovery: 1,000 increments exactly once", passed: counted && final == 1_000,
                detail: "b counts a at \(final.map(String.init) ?? "?")"))
        var moved: [Bool] = []
        for (view, mover, control, watcher, holder) in [(UInt8(1), a, controlA, b, idA), (2, b, controlB, a, idB)] {
            _ = try control.call(ControlCommand.pickUp(view: Int(view)), as: DoneResult.self)
            _ = await waitUntil(.seconds(10), every: .milliseconds(100)) {
                mover.call(ControlCommand.bubbles, as: [BubbleResult].self)?
                    .first { $0.view == Int(view) }?.holder == holder
            }
            for step in 1...3 {
                _ = try control.call(
                    ControlCommand.move(view: Int(view), x: Double(7 * step), y: Double(11 * step)),
                    as: DoneResult.self)
            }
            moved.append(
                await waitUntil(.seconds(10), every: .milliseconds(100)) {
                    let bubble = watcher.call(ControlCommand.bubbles, as: [BubbleResult].self)?
                        .first { $0.view == Int(view) }
                    return bubble?.x == 21 && bubble?.y == 33 && bubble?.holder == holder
                })
            _ = try control.call(ControlCommand.drop(view: Int(view)), as: DoneResult.self)
        }
        outcomes.append(
            Outcome(
                check: "LE discovery: bubbles both ways", passed: moved == [true, true],
                detail: "a's move seen by b \(moved[0]), b's move seen by a \(moved[1])"))

        log("LE discovery: b stops")
        // b stops: it says bye and withdraws its advertisement; a loses b's device within the timeout (10 s). A
        // daemon's log is read once it has exited: the time is its line's.
        let stopping = Date()
        kill(b.process.pid, SIGTERM)
        try? await Task.sleep(for: .seconds(15))
        a.stop()
        let aLog = a.process.stderr.split(separator: "\n")
        let found = aLog.contains { $0.contains("LE: found \(idB) at \(hci1.address)/\(0x94)") }
        outcomes.insert(
            Outcome(
                check: "LE discovery: found by advertising, linked over LE", passed: found && alone,
                detail: "linked \(linkedAfter) after the start, links \(links); b found in a's log \(found)"
                    + (found ? "" : "; a's LE lines: \(aLog.filter { $0.contains("LE") }.prefix(5))")),
            at: 0)
        let line = aLog.first { $0.contains("LE: le:\(hci1.address) no longer seen") }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
        let lostAt = line.flatMap { formatter.date(from: String($0.prefix(28))) }
        let lostAfter = lostAt.map { $0.timeIntervalSince(stopping) }
        outcomes.append(
            Outcome(
                check: "LE discovery: a device that stops advertising is lost within the timeout",
                passed: lostAfter.map { $0 <= 14 } ?? false,
                detail:
                    "lost \(lostAfter.map { String(format: "%.1f s", $0) } ?? "never") after b stopped (timeout 10 s, scans of 3 s)"
                    + (line != nil ? "" : "; a's last lines: \(aLog.suffix(4))")))
        return outcomes
    }
}
