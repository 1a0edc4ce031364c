#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// What /proc says about the machine's processes: whether one lives, its name, command line, children, and which
/// network namespace it is in. Pids are shared by every namespace of a lab (there is no pid namespace).
public enum ProcessTable {
    /// Every pid in /proc.
    public static func allPIDs() -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { pid_t($0) }
    }

    /// Whether process `pid` exists and is not a zombie.
    public static func isLive(_ pid: pid_t) -> Bool {
        guard pid > 0, let status = read("/proc/\(pid)/status") else { return false }
        let state = status.split(separator: "\n").first { $0.hasPrefix("State:") }
        return state.map { !$0.dropFirst(6).trimmed.hasPrefix("Z") } ?? false
    }

    /// Whether process `pid` exists, a zombie or not.
    public static func exists(_ pid: pid_t) -> Bool { access("/proc/\(pid)", F_OK) == 0 }

    /// The command name of process `pid` (/proc/PID/comm).
    public static func name(_ pid: pid_t) -> String? {
        read("/proc/\(pid)/comm").map { $0.trimmed }
    }

    /// The command line of process `pid`, each argument followed by a space.
    public static func commandLine(_ pid: pid_t) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    /// The processes whose parent is `pid`.
    public static func children(of pid: pid_t) -> [pid_t] {
        allPIDs().filter { parent(of: $0) == pid }
    }

    /// The parent of process `pid`.
    public static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = read("/proc/\(pid)/stat"), let end = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }

    /// The identity of process `pid`'s network namespace (device and inode of /proc/PID/ns/net).
    public static func networkNamespace(of pid: pid_t) -> NetworkNamespace.Identity? {
        NetworkNamespace.identity(ofFile: "/proc/\(pid)/ns/net")
    }

    /// Sends `signal` to each of `pids`, ignoring those that are gone.
    public static func signal(_ pids: [pid_t], _ signal: Int32) {
        for pid in pids where pid > 0 { kill(pid, signal) }
    }

    static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }
}
