import Foundation

/// What a person would use instead of a push: scp to an sshd in host 2 (its own keys, on host 2's address only), whose
/// time includes the SSH handshake, as it does for the person.
struct SCPAnchor {
    let lab: TestHostLab
    let address: String
    let file: String
    private let directory: String
    private let sshd: Int32

    /// Makes the keys and the configuration, and starts sshd in host 2.
    init(lab: TestHostLab, address: String, file: String) throws {
        self.lab = lab
        self.address = address
        self.file = file
        directory = lab.work + "/ssh"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for key in ["host_key", "client_key"] {
            try Subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", directory + "/" + key])
        }
        try FileManager.default.copyItem(
            atPath: directory + "/client_key.pub", toPath: directory + "/authorized_keys")
        let configuration = """
            ListenAddress \(address):47300
            HostKey \(directory)/host_key
            AuthorizedKeysFile \(directory)/authorized_keys
            PermitRootLogin prohibit-password
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            StrictModes no
            UsePAM no
            PidFile none
            Subsystem sftp internal-sftp

            """
        try configuration.write(toFile: directory + "/sshd_config", atomically: true, encoding: .utf8)
        try lab.run(inHost: 2, ["mkdir", "-p", "/run/sshd"])
        sshd =
            try lab.spawn(
                inHost: 2, ["/usr/sbin/sshd", "-D", "-e", "-f", directory + "/sshd_config"],
                stderr: .file(lab.work + "/sshd.err")
            ).pid
    }

    /// The seconds an scp with `cipher` took, and the CPU seconds of both its ends: on host 1, scp and the ssh it runs
    /// (a shell's `times` after them: its children's user and system time); on host 2, what the listening sshd gained
    /// from the connection's processes once it has waited for them all (each waits for its own). Both include the SSH
    /// handshake, as the time does.
    func copy(cipher: String) throws -> (seconds: Double, cpu: Double) {
        Polling.until(100, every: 0.05) {
            (try? lab.run(inHost: 1, ["bash", "-c", "echo >/dev/tcp/\(address)/47300"], stderr: .discard)) != nil
        }
        // The probe above is a connection too: its sshd child must be gone before the count starts.
        Polling.until(100, every: 0.05) { !ProcessStats.hasChildren(sshd) }
        let before = try ProcessStats.cpuTicks(sshd, children: true)
        let started = Date()
        let usage: String
        do {
            usage = try lab.output(
                inHost: 1,
                [
                    "bash", "-c", "\"$@\" && times", "scp", "scp", "-q", "-i", directory + "/client_key", "-o",
                    "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-c",
                    cipher, "-P", "47300", file, "root@\(address):/run/scp.bin",
                ])
        } catch {
            let log = (try? String(contentsOfFile: lab.work + "/sshd.err", encoding: .utf8)) ?? ""
            throw BenchFailure(
                "push: scp with \(cipher) failed: \(log.split(separator: "\n").suffix(3).joined(separator: " / "))")
        }
        let seconds = Date().timeIntervalSince(started)
        Polling.until(200, every: 0.05) { !ProcessStats.hasChildren(sshd) }
        let after = try ProcessStats.cpuTicks(sshd, children: true)
        try lab.run(inHost: 2, ["rm", "-f", "/run/scp.bin"])
        // `times` prints the shell's own user and system time, then its children's, as 0m1.234s.
        let lines = usage.split(separator: "\n")
        guard lines.count >= 2 else { throw BenchFailure("push: no times after scp: '\(usage)'") }
        let children = lines[1].matches(of: /(\d+)m([\d.]+)s/).reduce(0.0) { sum, match in
            sum + (Double(match.1) ?? 0) * 60 + (Double(match.2) ?? 0)
        }
        return (seconds, children + Double(after - before) / Double(ProcessStats.ticksPerSecond))
    }
}
