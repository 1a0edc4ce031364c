#if canImport(Glibc)
    import Glibc
#endif

/// Tears a lab down: its reaper, every process in its namespaces (by pid), its namespaces, its state. Idempotent.
public enum LabTeardown {
    /// Tears down lab `name`; a failure if processes do not end or namespaces are left.
    public static func down(_ name: String) throws(TestHostError) {
        let state = LabStateDirectory(name: name)
        let reaper = LabReaper.stop(lab: name, state: state)
        let namespaces = labNamespaces(name)
        var killed: [pid_t] = []
        var tries = 0
        // TERM first, KILL after 3 s, give up after 6 s.
        while case let pids = namespaces.flatMap(NetworkNamespace.pids), !pids.isEmpty {
            killed += pids
            ProcessTable.signal(pids, tries < 30 ? SIGTERM : SIGKILL)
            tries += 1
            guard tries <= 60 else {
                throw TestHostError.failed(
                    "\(name): processes \(pids.map(String.init).joined(separator: " ")) do not end")
            }
            Clock.sleep(0.1)
            CommandRunner.reap(pids)
        }
        // The reaper ends, its sleep too, on TERM; what is left of it after a second gets KILL.
        for attempt in 0..<10 {
            CommandRunner.reap(reaper)
            let live = reaper.filter(ProcessTable.isLive)
            if live.isEmpty { break }
            if attempt == 9 { ProcessTable.signal(live, SIGKILL) } else { Clock.sleep(0.1) }
        }
        killed += reaper
        for namespace in namespaces { NetworkNamespace.delete(namespace) }
        state.remove()
        // The daemons were reparented to init, which may take a second to reap them. Wait for that (3 s at most), so
        // that no zombie of the lab shows up in `ps` once `down` has returned.
        for _ in 0..<60 {
            CommandRunner.reap(killed)
            killed = killed.filter(ProcessTable.exists)
            if killed.isEmpty { break }
            Clock.sleep(0.05)
        }
        let left = labNamespaces(name)
        guard left.isEmpty else {
            throw TestHostError.failed("\(name): namespaces left: \(left.joined(separator: " "))")
        }
    }

    /// The lab's namespaces that exist, hosts first, then the switch.
    static func labNamespaces(_ name: String) -> [String] {
        let names = NetworkNamespace.names().filter { TestHostLayout.isNamespace($0, ofLab: name) }
        return names.filter { $0 != "\(name)-sw" } + names.filter { $0 == "\(name)-sw" }
    }
}
