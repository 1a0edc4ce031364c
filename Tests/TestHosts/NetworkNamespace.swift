#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// Named network namespaces (`ip netns`): those that exist, who is in one, adding and deleting them.
public enum NetworkNamespace {
    /// Where `ip netns` keeps the namespaces' names.
    public static let directory = "/run/netns"

    /// A namespace's identity: the device and inode of its nsfs file.
    public struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// The names of the network namespaces that exist.
    public static func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// The identity of namespace `name`, nil if there is none.
    public static func identity(_ name: String) -> Identity? { identity(ofFile: "\(directory)/\(name)") }

    static func identity(ofFile path: String) -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Whether process `pid` runs in namespace `name` (as `ip netns identify PID` would name it).
    public static func contains(_ pid: pid_t, _ name: String) -> Bool {
        guard let identity = identity(name) else { return false }
        return ProcessTable.networkNamespace(of: pid) == identity
    }

    /// The processes in namespace `name` (as `ip netns pids NAME` lists them).
    public static func pids(_ name: String) -> [pid_t] {
        guard let identity = identity(name) else { return [] }
        return ProcessTable.allPIDs().filter { ProcessTable.networkNamespace(of: $0) == identity }
    }

    /// The processes in namespace `name` whose command name is `command`.
    public static func pids(_ name: String, named command: String) -> [pid_t] {
        pids(name).filter { ProcessTable.name($0) == command }
    }

    /// Adds namespace `name`.
    public static func add(_ name: String) throws(CommandFailure) {
        try CommandRunner.run(["ip", "netns", "add", name])
    }

    /// Deletes namespace `name`, if it exists.
    public static func delete(_ name: String) {
        _ = try? CommandRunner.result(["ip", "netns", "del", name])
    }
}
