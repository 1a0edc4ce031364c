#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// What a lab needs: root (network namespaces) and the tools, each from its Debian package. scripts/testnet
/// installs missing packages as root before `up`, with service starts blocked.
public enum LabRequirements {
    /// Each tool a lab runs, with its Debian package.
    public static let tools: [(tool: String, package: String)] = [
        ("ip", "iproute2"), ("dbus-daemon", "dbus"), ("dbus-send", "dbus"), ("avahi-daemon", "avahi-daemon"),
        ("avahi-browse", "avahi-utils"), ("avahi-publish", "avahi-utils"), ("nsenter", "util-linux"),
        ("unshare", "util-linux"), ("setsid", "util-linux"),
    ]

    /// Whether this process runs as root.
    public static var isRoot: Bool { getuid() == 0 }

    /// The packages of the tools that are not on PATH (and dbus, without its system bus configuration).
    public static func missingPackages() -> [String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin"
        let directories = path.split(separator: ":").map(String.init)
        var missing: [String] = []
        for (tool, package) in tools where !missing.contains(package) {
            if !directories.contains(where: { access("\($0)/\(tool)", X_OK) == 0 }) { missing.append(package) }
        }
        if access("/usr/share/dbus-1/system.conf", F_OK) != 0 && !missing.contains("dbus") { missing.append("dbus") }
        return missing
    }

    /// Throws unless a lab can be made here: unavailable (exit 77) without root, a failure if tools are missing.
    public static func check() throws(TestHostError) {
        let missing = missingPackages()
        if !missing.isEmpty {
            guard isRoot else {
                throw TestHostError(
                    .unavailable, "skipped: missing \(missing.joined(separator: " ")) (run as root to install them)")
            }
            throw TestHostError.failed(
                "missing \(missing.joined(separator: " ")) (scripts/testnet up installs them as root)")
        }
        try checkRoot(" (network namespaces)")
    }

    /// Throws unavailable (exit 77) unless this process runs as root.
    public static func checkRoot(_ why: String = "") throws(TestHostError) {
        guard isRoot else { throw TestHostError(.unavailable, "skipped: needs root" + why) }
    }
}
