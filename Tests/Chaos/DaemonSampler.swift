import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A soak's measurements of every daemon (resident memory, anonymous memory, open descriptors, CPU time, from /proc),
/// one series per daemon incarnation (a restart after kill -9 starts a new one), and the verdict: a series whose last
/// quarter's median is well above its second quarter's grew without bound, and so did one long enough to fit whose
/// anonymous memory's slope after its first 5 minutes is above 0.05 MB a minute or that grew more than 2 MB since. Memory is judged by its anonymous part
/// (`RssAnon`: what the process allocated): resident memory also counts the pages of the binary and its libraries,
/// which are file-backed and shared and get paged in as code runs for the first time (a debug sessiond is 70 MB).
final class DaemonSampler: Sendable {
    struct Sample: Sendable {
        var seconds: Double
        var rssKiB: Int
        var anonKiB: Int
        var fds: Int
        var cpuSeconds: Double
    }

    /// Samples a series needs to be judged.
    static let minimumSamples = 8
    /// Growth allowed from the second quarter's median to the last quarter's: a quarter more, plus this much.
    static let rssSlackKiB = 4096
    static let fdSlack = 8
    /// The slope is fitted to a series' samples after its first 5 minutes (caches, pools and the first peers' tables
    /// fill then), when at least 10 minutes of samples follow them.
    static let slopeWarmupSeconds = 300.0
    static let slopeMinimumSeconds = 600.0
    /// A steady growth above 0.05 MB a minute fails the soak (72 MB a day), and so does more than 2 MB in all from
    /// minute 5 to the end (the medians of the first and the last minute of the fit).
    static let slopeLimitMBPerMinute = 0.05
    static let growthLimitKiB = 2048

    let daemons: Daemons
    private let series = Mutex<[(key: String, samples: [Sample])]>([])
    private let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))

    init(daemons: Daemons) {
        self.daemons = daemons
    }

    /// Measures every running daemon now; returns a line for people.
    @discardableResult
    func sample(elapsed: Double) -> String {
        var parts: [String] = []
        for host in 1...daemons.hosts {
            guard let pid = daemons.pid(host), let sample = measure(pid, elapsed: elapsed) else {
                parts.append("h\(host) down")
                continue
            }
            let key = "h\(host) pid \(pid)"
            series.withLock { series in
                if let index = series.firstIndex(where: { $0.key == key }) {
                    series[index].samples.append(sample)
                } else {
                    series.append((key, [sample]))
                }
            }
            parts.append(
                "\(key) rss \(sample.rssKiB) KiB anon \(sample.anonKiB) KiB fds \(sample.fds) cpu "
                    + "\(String(format: "%.1f", sample.cpuSeconds)) s")
        }
        return parts.joined(separator: ", ")
    }

    private func measure(_ pid: Int32, elapsed: Double) -> Sample? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        else { return nil }
        func kibibytes(_ field: String) -> Int? {
            status.split(separator: "\n").first { $0.hasPrefix(field) }
                .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
        }
        // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
        guard let close = stat.lastIndex(of: ")"), let rss = kibibytes("VmRSS:"), let anon = kibibytes("RssAnon:")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return Sample(
            seconds: elapsed, rssKiB: rss, anonKiB: anon, fds: fds.count, cpuSeconds: (user + system) / ticks)
    }

    /// Judges every series long enough: the median of its last quarter against the median of its second quarter.
    func verdict() -> SoakVerdict {
        var verdict = SoakVerdict()
        for (key, samples) in series.withLock({ $0 }) {
            guard samples.count >= Self.minimumSamples else {
                verdict.shortSeries += 1
                continue
            }
            let quarter = samples.count / 4
            let second = Array(samples[quarter..<2 * quarter])
            let last = Array(samples[(samples.count - quarter)...])
            let rss = (Self.median(second.map(\.rssKiB)), Self.median(last.map(\.rssKiB)))
            let anon = (Self.median(second.map(\.anonKiB)), Self.median(last.map(\.anonKiB)))
            let fds = (Self.median(second.map(\.fds)), Self.median(last.map(\.fds)))
            let anonGrew = anon.1 > anon.0 + anon.0 / 4 + Self.rssSlackKiB
            let fdsGrew = fds.1 > fds.0 + fds.0 / 4 + Self.fdSlack
            let trend = Self.trend(samples)
            let sloped =
                trend.map { $0.slopeMBPerMinute > Self.slopeLimitMBPerMinute || $0.growthKiB > Self.growthLimitKiB }
                ?? false
            verdict.judged.append(
                SoakVerdict.Series(
                    daemon: key, samples: samples.count, rssKiB: [rss.0, rss.1], anonKiB: [anon.0, anon.1],
                    fds: [fds.0, fds.1], cpuSeconds: samples.last?.cpuSeconds ?? 0,
                    anonSlopeMBPerMinute: trend?.slopeMBPerMinute, anonGrowthKiB: trend?.growthKiB,
                    grew: anonGrew || fdsGrew || sloped))
        }
        return verdict
    }

    /// The least-squares slope of a series' anonymous memory after its warm-up, in MB (10^6 bytes) a minute, and its
    /// growth from the first minute of the fit to the last; nil for a series too short.
    static func trend(_ samples: [Sample]) -> (slopeMBPerMinute: Double, growthKiB: Int)? {
        guard let first = samples.first?.seconds else { return nil }
        let fitted = samples.filter { $0.seconds - first >= slopeWarmupSeconds }
        guard let from = fitted.first?.seconds, let to = fitted.last?.seconds, to - from >= slopeMinimumSeconds
        else { return nil }
        let n = Double(fitted.count)
        let xs = fitted.map { ($0.seconds - from) / 60 }
        let ys = fitted.map { Double($0.anonKiB) * 1024 / 1_000_000 }
        let meanX = xs.reduce(0, +) / n
        let meanY = ys.reduce(0, +) / n
        let covariance = zip(xs, ys).map { ($0 - meanX) * ($1 - meanY) }.reduce(0, +)
        let variance = xs.map { ($0 - meanX) * ($0 - meanX) }.reduce(0, +)
        let firstMinute = fitted.filter { $0.seconds - from < 60 }.map(\.anonKiB)
        let lastMinute = fitted.filter { to - $0.seconds < 60 }.map(\.anonKiB)
        return (covariance / variance, median(lastMinute) - median(firstMinute))
    }

    static func median(_ values: [Int]) -> Int {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}

/// A soak's verdict on memory and descriptors.
struct SoakVerdict: Encodable {
    struct Series: Encodable {
        var daemon: String
        var samples: Int
        /// Medians of the second and the last quarter.
        var rssKiB: [Int]
        var anonKiB: [Int]
        var fds: [Int]
        var cpuSeconds: Double
        /// The anonymous memory's trend after the warm-up (nil for a series too short to fit).
        var anonSlopeMBPerMinute: Double?
        var anonGrowthKiB: Int?
        var grew: Bool
    }

    var judged: [Series] = []
    /// Incarnations with too few samples to judge (killed soon after they started).
    var shortSeries = 0

    var passed: Bool { !judged.isEmpty && !judged.contains(where: \.grew) }
}
