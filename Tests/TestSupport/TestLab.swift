import Foundation
import TestHosts

/// A lab of test hosts (TestHosts): network namespaces on one bridge, each with its own D-Bus and avahi-daemon.
/// Remove it with ``down()`` on every exit path.
public struct TestLab: Sendable {
    /// Why a lab cannot be had here, if it cannot.
    public static let unavailableReason: String? = {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return nil }  // under CI, fail loudly instead
        return getuid() == 0
            ? nil : "test hosts need root (network namespaces and avahi-daemon); run scripts/test as root"
    }()

    /// The package's root directory.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Where the package's built executables are (next to the running test binary).
    public static let binDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .path

    /// scripts/testnet's program, built with the tests: `exec` replaces itself with the command inside a host, which
    /// takes a process of one thread (this one has many); a lab's reaper runs its `down`.
    static let program = binDirectory + "/lansession-testnet"

    /// The lab's name, unique per run.
    public let name: String
    /// How many hosts it has, numbered from 1.
    public let hostCount: Int

    /// Creates `count` hosts, on one network or two (eth0 = 10.77.0.I, eth1 = 10.78.0.I), and waits until each
    /// one's avahi-daemon runs.
    public static func up(_ count: Int, networks: Int = 1, ttl: Int = 300) throws -> TestLab {
        var setup = LabSetup(hostCount: count, downCommand: program)
        setup.networks = networks
        setup.ttl = ttl
        do {
            return TestLab(name: try setup.up().name, hostCount: count)
        } catch {
            throw TestLabError("test hosts: up \(count) failed (exit \(error.exitCode)): \(error)")
        }
    }

    /// Removes every namespace and process of the lab.
    public func down() {
        try? LabTeardown.down(name)
    }

    /// Host `host`'s IPv4 address on network `network` (1 or 2).
    public func address(_ host: Int, network: Int = 1) throws -> String {
        try labHost(host).address(network: network)
    }

    /// The pid of the process holding host `host`'s namespaces; `/proc/PID/root` is the host's file system view.
    public func holderPID(_ host: Int) throws -> Int32 {
        try labHost(host).holderPID()
    }

    /// Stops, starts or restarts host `host`'s avahi-daemon and waits until that is done.
    public func avahi(_ host: Int, _ action: String) throws {
        guard let action = HostAvahi.Action(rawValue: action) else { throw TestLabError("no avahi action \(action)") }
        do {
            try HostAvahi(labHost(host)).perform(action)
        } catch {
            throw TestLabError("avahi \(action) on host \(host) failed: \(error)")
        }
    }

    private func labHost(_ host: Int) throws(TestHostError) -> LabHost {
        try LabHost(lab: name, host: "\(host)")
    }

    /// Runs `ip ARGUMENTS` in host `host`'s network namespace (its interfaces and routes); throws on failure.
    public func ip(_ host: Int, _ arguments: [String]) throws {
        let result = try Self.run(["ip", "-n", "\(name)-h\(host)"] + arguments, timeout: 10)
        guard result.status == 0 else {
            throw TestLabError("ip \(arguments.joined(separator: " ")) in host \(host) failed: \(result.stderr)")
        }
    }

    /// Takes one of host `host`'s network interfaces down or up, as a pulled cable or a lost Wi-Fi would.
    public func setLink(_ host: Int, interface: String = "eth0", up: Bool) throws {
        try ip(host, ["link", "set", interface, up ? "up" : "down"])
    }

    /// Cuts (or heals) the path between hosts `a` and `b` only: each drops what it sends to the other, while both
    /// keep talking to everyone else and multicast (mDNS) still flows.
    public func setCut(between a: Int, and b: Int, _ cut: Bool) throws {
        for (from, to) in [(a, b), (b, a)] {
            try ip(from, ["route", cut ? "add" : "del", "blackhole", try address(to) + "/32"])
        }
    }

    /// Runs `command` inside host `host` to completion.
    public func run(_ host: Int, _ command: [String], timeout: Double = 30) throws -> ProcessResult {
        try Self.run([Self.program, "exec", name, "\(host)"] + command, timeout: timeout)
    }

    /// Starts `command` inside host `host`, its stdout read line by line.
    public func spawn(_ host: Int, _ command: [String]) throws -> HostProcess {
        try HostProcess(arguments: [Self.program, "exec", name, "\(host)"] + command)
    }

    /// Runs a command on this machine (not in a test host) to completion, killing it after `timeout` seconds.
    public static func run(_ arguments: [String], timeout: Double) throws -> ProcessResult {
        let child = try ChildProcess(arguments)
        child.closeStdin()
        let killer = DispatchWorkItem { child.signal(SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        let errors = DispatchQueue.global()
        let errorData = LockedData()
        let group = DispatchGroup()
        errors.async(group: group) { errorData.set(ChildProcess.readAll(child.stderr)) }
        let out = ChildProcess.readAll(child.stdout)
        group.wait()
        let status = child.wait()
        killer.cancel()
        return ProcessResult(
            status: status, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: errorData.get(), as: UTF8.self))
    }
}

/// Data handed from one thread to another.
final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}

/// What a finished command printed and returned.
public struct ProcessResult: Sendable {
    /// Exit status.
    public var status: Int32
    /// Everything printed on stdout.
    public var stdout: String
    /// Everything printed on stderr.
    public var stderr: String
}

/// Why the lab failed.
public struct TestLabError: Error, CustomStringConvertible {
    /// What failed.
    public var description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}
