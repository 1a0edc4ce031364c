import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// The measuring half of `push`: two release sessiond on a lab's hosts 1 and 2, the anchors between the same hosts,
/// then the push itself with pings meanwhile.
struct PushBench {
    let lab: TestHostLab
    let command: PushCommand
    private let file: String
    private let size: Double

    init(lab: TestHostLab, command: PushCommand) {
        self.lab = lab
        self.command = command
        file = lab.work + "/payload.bin"
        size = Double(command.megabytes) * 1e6
    }

    func measure() throws -> PushFigures {
        let address1 = try lab.address(ofHost: 1)
        let address2 = try lab.address(ofHost: 2)
        try Subprocess.run(
            ["head", "-c", String(command.megabytes * 1_000_000), "/dev/urandom"], stdout: .file(file))
        let digest = String(try Subprocess.output(["sha256sum", file]).prefix(64))
        let (daemon1, daemon2) = try startDaemons(peerAddress: address1)
        if let rate = command.rate {
            try lab.run(
                inHost: 1,
                ["tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", rate, "burst", "256kb", "latency", "20ms"])
        }
        // Memory that nobody has touched yet is slow to get in a virtual machine: the first 200 MB written to a tmpfs
        // went at about 0.4 GB/s here and the next at 3.4 GB/s. Whichever row came first paid for it (the raw copy
        // did: 0.16× the link). So host 2's /run, where every row writes, gets that memory once before any row is
        // timed.
        try lab.run(
            inHost: 2,
            ["dd", "if=/dev/zero", "of=/run/warm.bin", "bs=1M", "count=\(command.megabytes * 2)", "status=none"])
        try lab.run(inHost: 2, ["rm", "/run/warm.bin"])

        var figures = PushFigures(megabytes: command.megabytes, rate: command.rate, sealing: command.sealing)
        (figures.raw, figures.rawCPU) = try rawCopy(to: address2)
        (figures.iperf, figures.iperfCPUPerByte) = try iperf(to: address2)
        let scp = try SCPAnchor(lab: lab, address: address2, file: file)
        (figures.scpGCM, figures.scpGCMCPU) = try scp.copy(cipher: "aes128-gcm@openssh.com")
        (figures.scpChaCha, figures.scpChaChaCPU) = try scp.copy(cipher: "chacha20-poly1305@openssh.com")

        let control = try ControlClient(path: try lab.path(inHost: 1, "/run/lansession/sessiond.sock"))
        figures.idle = try control.call(.bench(.init(peer: "h2", count: 500)), as: BenchResult.self)
        // Both daemons' CPU from just before the push to its end (which comes once host 2 has verified and synced the
        // file); the pings taken meanwhile are in it too, a small part.
        let senderBefore = try ProcessStats.cpuTicks(daemon1)
        let receiverBefore = try ProcessStats.cpuTicks(daemon2)
        let pushOut = lab.work + "/push.out"
        let push = try lab.spawn(
            inHost: 1, [lab.bin + "/session-client", "--json", "push", file, "--to", "h2"], stdout: .file(pushOut))
        Polling.until(200, every: 0.01) { Polling.file(pushOut, contains: "\"started\"") }
        figures.busy = try control.call(.bench(.init(peer: "h2", count: 200)), as: BenchResult.self)
        // Whether the pings were all taken while the push ran: a push that ended first leaves them partly idle.
        figures.within = push.isRunning
        try push.wait()
        figures.senderCPU =
            Double(try ProcessStats.cpuTicks(daemon1) - senderBefore) / Double(ProcessStats.ticksPerSecond)
        figures.receiverCPU =
            Double(try ProcessStats.cpuTicks(daemon2) - receiverBefore) / Double(ProcessStats.ticksPerSecond)
        let lines = String(decoding: FileManager.default.contents(atPath: pushOut) ?? Data(), as: UTF8.self)
        guard let last = lines.split(separator: "\n").last,
            let final = try? JSONDecoder().decode(TransferResult.self, from: Data(last.utf8)),
            let seconds = final.seconds
        else { throw BenchFailure("push: no final line from session-client push") }
        figures.push = seconds
        let landed = try lab.output(inHost: 2, ["sha256sum", "/run/push-state/inbox/payload.bin"]).prefix(64)
        guard landed == digest else { throw BenchFailure("push: the file landed with another SHA-256") }
        return figures
    }

    /// The two daemons, host 2's dialling host 1's, once host 1 counts one peer; their pids.
    private func startDaemons(peerAddress: String) throws -> (Int32, Int32) {
        var extra = ["--admission", "open"]
        if command.insecure { extra.append("--insecure") }
        if command.secret {
            let path = lab.work + "/secret"
            try Subprocess.run(["sh", "-c", "head -c 32 /dev/urandom | base64 > \"$1\"; chmod 600 \"$1\"", "sh", path])
            extra = ["--secret-file", path]
        }
        let common = [
            "--session", "push-bench", "--port", "47000", "--no-discovery", "--state-dir", "/run/push-state",
        ]
        let one = try lab.spawn(
            inHost: 1, [lab.bin + "/sessiond", "--name", "h1"] + common + ["--log-level", "warning"] + extra)
        let two = try lab.spawn(
            inHost: 2,
            [lab.bin + "/sessiond", "--name", "h2"] + common
                + ["--peer", "\(peerAddress):47000", "--log-level", "warning"] + extra)
        let socket = try lab.path(inHost: 1, "/run/lansession/sessiond.sock")
        Polling.until(100, every: 0.1) {
            guard let client = try? ControlClient(path: socket),
                let status = try? client.call(.status, as: StatusResult.self)
            else { return false }
            return status.peers == 1
        }
        return (one.pid, two.pid)
    }

    /// The baseline: one TCP connection, sendfile on host 1, recv into a file in host 2's /run (where the inbox is);
    /// the median of 3, of the time and (separately) of the CPU both ends report for their part of the copy.
    private func rawCopy(to address: String) throws -> (seconds: Double, cpu: Double) {
        let program = Repository.path("scripts/lib/raw-copy.py")
        var times: [Double] = []
        var cpus: [Double] = []
        for round in 1...3 {
            let out = lab.work + "/raw\(round).out"
            let receiver = try lab.spawn(
                inHost: 2, ["python3", program, "receive", "47100", "/run/raw-copy.bin"], stdout: .file(out))
            Polling.until(100, every: 0.05) { Polling.file(out, contains: "listening") }
            let sent = try lab.output(inHost: 1, ["python3", program, "send", address, "47100", file])
            try receiver.wait()
            let received = try Self.lastObject(
                String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self))
            let sender = try Self.lastObject(sent)
            guard let seconds = received["seconds"] as? Double, let receiverCPU = received["cpu_seconds"] as? Double,
                let senderCPU = sender["cpu_seconds"] as? Double
            else { throw BenchFailure("push: raw-copy.py printed no figures") }
            times.append(seconds)
            cpus.append(receiverCPU + senderCPU)
        }
        return (times.sorted()[1], cpus.sorted()[1])
    }

    /// The link's limit: iperf3, one TCP stream for 3 s, memory to memory. Its CPU is its own report: each end's user
    /// and system time over the test as a share of one CPU, times the test's length. Bytes a second, and CPU
    /// nanoseconds a byte.
    private func iperf(to address: String) throws -> (bytesPerSecond: Double, cpuPerByte: Double) {
        let out = lab.work + "/iperf.out"
        let server = try lab.spawn(
            inHost: 2, ["iperf3", "-s", "-1", "-B", address, "-p", "47200"], stdout: .file(out), stderr: .discard)
        Polling.until(100, every: 0.05) { Polling.file(out, contains: "listening") }
        let report = try lab.output(inHost: 1, ["iperf3", "-c", address, "-p", "47200", "-t", "3", "-J"])
        _ = try? server.wait()
        let end = try JSONDecoder().decode(IPerfReport.self, from: Data(report.utf8)).end
        let seconds =
            (end.cpu_utilization_percent.host_total + end.cpu_utilization_percent.remote_total) / 100
            * end.sum_sent.seconds
        return (end.sum_received.bits_per_second / 8, seconds * 1e9 / end.sum_received.bytes)
    }

    /// The last line of `text` that is a JSON object.
    private static func lastObject(_ text: String) throws -> [String: Any] {
        guard let line = text.split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw BenchFailure("push: expected a JSON line, got '\(text.suffix(200))'") }
        return object
    }
}
