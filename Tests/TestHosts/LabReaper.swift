#if canImport(Glibc)
    import Glibc
#endif

/// The process that tears a lab down once its time to live has passed: a shell in a session of its own that sleeps,
/// then execs `COMMAND down NAME`. `down` ends it (TERM ends its sleep too) when called earlier.
public enum LabReaper {
    /// The reaper's name in its command line, by which `down` knows it (pids get reused).
    public static let marker = "lansession-testnet-reaper"

    /// Starts the reaper of lab `name`, which runs `command down NAME` after `ttl` seconds, and records its pid.
    public static func start(
        lab name: String, ttl: Int, command: String, state: LabStateDirectory
    )
        throws(TestHostError)
    {
        let script = #"trap "kill \$s 2>/dev/null; exit 0" TERM; sleep "$1" & s=$!; wait "$s" && exec "$2" down "$3""#
        let pid: pid_t
        do {
            pid = try CommandRunner.spawnDetached(["sh", "-c", script, marker, "\(ttl)", command, name])
        } catch {
            throw TestHostError.failed("\(name): cannot start its reaper: \(error)")
        }
        try LabStateDirectory.write(state.file("reaper.pid"), "\(pid)")
    }

    /// Sends TERM to lab `name`'s reaper, if that pid still is this lab's reaper and not this process (the reaper runs
    /// `down` as itself); returns the reaper's pid and its children's, to wait for.
    public static func stop(lab name: String, state: LabStateDirectory) -> [pid_t] {
        guard let pid = LabStateDirectory.readPID(state.file("reaper.pid")), pid != getpid(),
            let commandLine = ProcessTable.commandLine(pid), commandLine.contains(" \(marker) "),
            commandLine.hasSuffix(" \(name) ")
        else { return [] }
        let pids = [pid] + ProcessTable.children(of: pid)
        kill(pid, SIGTERM)
        return pids
    }
}
