import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A lab of test hosts for a benchmark (scripts/testnet, run as a program): release builds of the daemon and the
/// client, a scratch directory, the lab, and what the benchmark starts in its hosts; ``down()`` ends those by pid,
/// removes the lab and the scratch directory, and runs on an error (``with(_:hosts:products:_:)``) and on SIGINT or
/// SIGTERM too.
final class TestHostLab: Sendable {
    /// The benchmark's name: the prefix of the lab's name and of its messages.
    let name: String
    /// The root package's release binaries (sessiond, session-client).
    let bin: String
    /// A scratch directory, removed by ``down()``.
    let work: String
    /// The lab's name, as scripts/testnet knows it.
    let lab: String
    private let testnet = Repository.path("scripts/testnet")
    private let spawned = Mutex<[Subprocess]>([])
    private let finished = Atomic<Bool>(false)
    private let trapKey = Mutex<Int?>(nil)

    /// Checks for root, builds `products` of the root package in release mode, makes the scratch directory and a lab
    /// of `hosts` test hosts named `name-…` (alive at most 900 s).
    init(_ name: String, hosts: Int, products: [String] = ["sessiond", "session-client"]) throws {
        guard getuid() == 0 else { throw BenchFailure("\(name): needs root (test hosts)") }
        self.name = name
        bin = try Repository.releaseBuild(products)
        work = try Repository.scratchDirectory(name)
        do {
            lab = try Subprocess.output(
                [testnet, "up", String(hosts), "--ttl", "900", "--prefix", name], stderr: .standardError)
        } catch {
            try? FileManager.default.removeItem(atPath: work)
            throw error
        }
        let key = SignalTrap.add { [self] in down() }
        trapKey.withLock { $0 = key }
    }

    /// Runs `body` with a lab of `hosts` hosts, and takes the lab down after it, whether it returned or threw.
    static func with<Result>(
        _ name: String, hosts: Int, products: [String] = ["sessiond", "session-client"],
        _ body: (TestHostLab) async throws -> Result
    ) async throws -> Result {
        let lab = try TestHostLab(name, hosts: hosts, products: products)
        defer { lab.down() }
        return try await body(lab)
    }

    /// `command` run in host `host` (its network and mount namespaces), waited for.
    func run(
        inHost host: Int, _ command: [String], stdout: Subprocess.Stream = .inherit,
        stderr: Subprocess.Stream = .inherit
    ) throws(SubprocessError) {
        try Subprocess.run(hostCommand(host, command), stdout: stdout, stderr: stderr)
    }

    /// `command` run in host `host`, waited for: its stdout without the trailing newline.
    func output(
        inHost host: Int, _ command: [String], stderr: Subprocess.Stream = .capture
    ) throws(SubprocessError)
        -> String
    {
        try Subprocess.output(hostCommand(host, command), stderr: stderr)
    }

    /// `command` started in host `host` in the background (scripts/testnet execs it: the pid is the command's);
    /// ``down()`` ends it if it still runs.
    @discardableResult
    func spawn(
        inHost host: Int, _ command: [String], stdout: Subprocess.Stream = .inherit,
        stderr: Subprocess.Stream = .inherit
    ) throws(SubprocessError) -> Subprocess {
        let child = Subprocess(hostCommand(host, command), stdout: stdout, stderr: stderr)
        try child.start()
        spawned.withLock { $0.append(child) }
        return child
    }

    /// Host `host`'s IPv4 address on network `network` (1 or 2).
    func address(ofHost host: Int, network: Int = 1) throws(SubprocessError) -> String {
        try Subprocess.output([testnet, "addr", lab, String(host), String(network)])
    }

    /// The pid of host `host`'s holder: its namespaces are /proc/PID/ns/….
    func holderPID(ofHost host: Int) throws -> Int32 {
        let text = try Subprocess.output([testnet, "pid", lab, String(host)])
        guard let pid = Int32(text) else { throw BenchFailure("\(name): no pid for host \(host): '\(text)'") }
        return pid
    }

    /// `path` inside host `host`'s mount namespace, as this process reaches it (/proc/PID/root/…): a control socket
    /// under the host's own /run, say.
    func path(inHost host: Int, _ path: String) throws -> String {
        let holder = try holderPID(ofHost: host)
        return "/proc/\(holder)/root" + path
    }

    /// Ends what ``spawn(inHost:_:stdout:stderr:)`` started (SIGTERM, by pid), takes the lab down and removes the
    /// scratch directory. Runs once; later calls do nothing.
    func down() {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let key = trapKey.withLock({ $0 }) { SignalTrap.remove(key) }
        let children = spawned.withLock { $0 }
        for child in children { child.terminate() }
        if !children.isEmpty { usleep(300_000) }
        try? Subprocess.run([testnet, "down", lab], stdout: .discard, stderr: .discard)
        try? FileManager.default.removeItem(atPath: work)
    }

    private func hostCommand(_ host: Int, _ command: [String]) -> [String] {
        [testnet, "exec", lab, String(host)] + command
    }
}
