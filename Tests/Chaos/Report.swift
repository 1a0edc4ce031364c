import Foundation

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
                        + "\(String(format: "%.1f", series.cpuSeconds)) s"
                        + (series.anonSlopeMBPerMinute.map {
                            ", anon slope \(String(format: "%.4f", $0)) MB/min and "
                                + "\(series.anonGrowthKiB ?? 0) KiB from minute 5 to the end"
                        } ?? "") + (series.grew ? ": GREW" : ""))
            }
            Swift.print("\(soak.shortSeries) incarnations too short to judge")
        }
        Swift.print(passed ? "PASS: nothing lost, nothing doubled" : "FAIL")
    }
}
