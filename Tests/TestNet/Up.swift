import ArgumentParser
import TestHosts

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `up N [--prefix NAME] [--ttl SECONDS] [--networks 1|2]`: prints the lab's name, nothing else.
struct Up: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create N hosts (1..64) and wait until each one's avahi-daemon runs; print the lab's name.")

    @Argument(help: "Hosts, 1...64.") var count: PositiveNumber
    @Option(help: "The lab's name starts with this (a-z, then up to 19 of a-z, 0-9, '-'; $LANSESSION_LAB_PREFIX).")
    var prefix = LabSetup.defaultPrefix
    @Option(help: "Seconds until the lab tears itself down (1...999999).") var ttl = PositiveNumber(600)
    @Option(help: "Networks: 1, or 2 (eth0 = 10.77.0.I and eth1 = 10.78.0.I).") var networks = NetworkNumber.one

    func validate() throws {
        guard count.value <= TestHostLayout.maxHosts else {
            throw ValidationError("a lab has 1...\(TestHostLayout.maxHosts) hosts")
        }
        guard TestHostLayout.isPrefix(prefix) else { throw ValidationError("bad prefix \(prefix)") }
        guard ttl.value <= 999_999 else { throw ValidationError("--ttl must be 1...999999") }
    }

    /// The lab's setup, whose reaper runs this executable's `down`.
    var setup: LabSetup {
        var setup = LabSetup(hostCount: count.value, downCommand: Self.executable)
        setup.prefix = prefix
        setup.ttl = ttl.value
        setup.networks = networks.rawValue
        return setup
    }

    func run() throws {
        let layout = try setup.up()
        print(layout.name)
    }

    /// This executable's path (the reaper runs it).
    static var executable: String {
        let path =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return path.hasSuffix(" (deleted)") ? String(path.dropLast(10)) : path
    }
}
