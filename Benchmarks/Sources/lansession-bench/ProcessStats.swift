import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What /proc says about a process and about the machine. The test hosts share this machine's process ids, so a
/// daemon in a host is read here by its pid.
enum ProcessStats {
    /// Clock ticks a second (`getconf CLK_TCK`).
    static let ticksPerSecond = Int(sysconf(Int32(_SC_CLK_TCK)))

    /// The user and system time `pid` has used so far, all its threads, in clock ticks; with `children`, also that of
    /// its children that ended and were waited for. The command's name (field 2) may hold spaces: the fields are
    /// counted after its closing parenthesis, where field 3 comes first.
    static func cpuTicks(_ pid: Int32, children: Bool = false) throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        guard let close = text.lastIndex(of: ")") else { throw BenchFailure("unreadable /proc/\(pid)/stat") }
        let fields = text[text.index(after: close)...].split(separator: " ").compactMap { Int($0) }
        // After the state (a letter, skipped), fields[10...13] are utime, stime, cutime, cstime.
        guard fields.count > 13 else { throw BenchFailure("unreadable /proc/\(pid)/stat") }
        return fields[10] + fields[11] + (children ? fields[12] + fields[13] : 0)
    }

    /// ``cpuTicks(_:children:)`` in seconds.
    static func cpuSeconds(_ pid: Int32, children: Bool = false) throws -> Double {
        Double(try cpuTicks(pid, children: children)) / Double(ticksPerSecond)
    }

    /// The process's anonymous resident memory (RssAnon), in KiB.
    static func anonymousKiB(_ pid: Int32) throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix("RssAnon:") {
            if let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({
                Int($0)
            }) {
                return value
            }
        }
        throw BenchFailure("no RssAnon for \(pid)")
    }

    /// The process's name (/proc/PID/comm).
    static func name(_ pid: Int32) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether `pid` has children that have not been waited for (/proc/PID/task/PID/children).
    static func hasChildren(_ pid: Int32) -> Bool {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
    }

    /// Busy and total clock ticks of all the machine's CPUs so far (/proc/stat; idle and iowait are not busy).
    static func machineTicks() throws -> (busy: Int, total: Int) {
        let text = try String(contentsOfFile: "/proc/stat", encoding: .utf8)
        guard let first = text.split(separator: "\n").first else { throw BenchFailure("unreadable /proc/stat") }
        let fields = first.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard fields.count > 4 else { throw BenchFailure("unreadable /proc/stat") }
        let total = fields.reduce(0, +)
        return (total - fields[3] - fields[4], total)
    }
}
