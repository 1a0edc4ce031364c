import ArgumentParser
import Foundation
import SessionControl
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The daemons of the lab: started, killed and restarted by pid, asked through their control sockets.
final class Daemons: Sendable {
    let lab: TestLab
    let hosts: Int
    let logs: String?
    /// Kills and restarts, for the payload checks.
    let timeline = Timeline()
    private let processes = Mutex<[Int: HostProcess]>([:])
    private let holders = Mutex<[Int: Int32]>([:])

    init(lab: TestLab, hosts: Int, logs: String?) {
        self.lab = lab
        self.hosts = hosts
        self.logs = logs
    }

    func start(_ host: Int) throws {
        var command = [
            TestLab.binDirectory + "/sessiond", "--admission", "open", "--name", "h\(host)", "--session", "chaos",
            "--port", "47000",
            "--state-dir", "/run/lansession-state", "--log-level", logs == nil ? "notice" : "info",
        ]
        if let logs {
            // The shell execs the daemon with stderr appended to the host's log: the pid stays the daemon's.
            command = ["sh", "-c", "exec \"$0\" \"$@\" 2>>'\(logs)/h\(host).log'"] + command
        }
        let process = try lab.spawn(host, command)
        processes.withLock { $0[host] = process }
        timeline.end(.daemonDown, host: host)
    }

    /// kill -9, and waits until the process is gone.
    func kill9(_ host: Int) {
        guard let process = processes.withLock({ $0.removeValue(forKey: host) }) else { return }
        timeline.begin(.daemonDown, host: host)
        kill(process.pid, SIGKILL)
        process.stop()  // reaps it
    }

    /// The pid of host `host`'s daemon, while it runs.
    func pid(_ host: Int) -> Int32? {
        processes.withLock { $0[host]?.pid }
    }

    /// `path` inside host `host` (its own /run, say), as this machine sees it.
    func path(_ host: Int, _ path: String) throws -> String {
        "/proc/\(try holderPID(host))/root\(path)"
    }

    private func holderPID(_ host: Int) throws -> Int32 {
        if let pid = holders.withLock({ $0[host] }) { return pid }
        let pid = try lab.holderPID(host)
        holders.withLock { $0[host] = pid }
        return pid
    }

    func stopAll() {
        for process in processes.withLock({ Array($0.values) }) { process.stop() }
    }

    func socketPath(_ host: Int) throws -> String {
        try path(host, "/run/lansession/sessiond.sock")
    }

    func call<Result: Decodable>(_ host: Int, _ request: ControlCommand, as type: Result.Type) -> Result? {
        guard let client = try? ControlClient(path: try socketPath(host)) else { return nil }
        client.setReadTimeout(seconds: 5)
        return try? client.call(request, as: type)
    }

    func peerID(_ host: Int) throws -> String {
        guard let status = call(host, ControlCommand.status, as: StatusResult.self) else {
            throw ValidationError("host \(host) does not answer")
        }
        return status.peerID
    }

    func allConnected() -> Bool {
        (1...hosts).allSatisfy {
            call($0, ControlCommand.status, as: StatusResult.self)?.peers == hosts - 1
        }
    }

    /// Every host's counts by peer id, its own included.
    func views() -> [Int: [String: UInt64]] {
        var views: [Int: [String: UInt64]] = [:]
        for host in 1...hosts {
            guard let counter = call(host, ControlCommand.counter, as: CounterResult.self),
                let status = call(host, ControlCommand.status, as: StatusResult.self)
            else { continue }
            var view = counter.peers.mapValues(\.count)
            view[status.peerID] = counter.local
            views[host] = view
        }
        return views
    }
}
