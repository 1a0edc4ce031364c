#if canImport(Glibc)
    import Glibc
#endif

/// A host's avahi-daemon: started in the host's namespaces with the lab's configuration, logging to the state
/// directory, stopped by pid (only processes of the host's network namespace).
public struct HostAvahi: Sendable {
    /// What `avahi` does.
    public enum Action: String, CaseIterable, Sendable {
        case stop, start, restart
    }

    /// The host.
    public let host: LabHost
    /// Its holder's pid.
    public let holder: pid_t

    /// The avahi-daemon of `host`, whose holder must live.
    public init(_ host: LabHost) throws(TestHostError) {
        self.host = host
        self.holder = try host.holderPID()
    }

    /// Stops, starts or restarts the daemon, and waits until that is done: stopped, or running (its D-Bus name
    /// owned and its state "running") within the lab's ready timeout.
    public func perform(_ action: Action) throws(TestHostError) {
        if action != .start { try stop() }
        if action != .stop {
            if let running = NetworkNamespace.pids(host.namespace, named: "avahi-daemon").first {
                try LabStateDirectory.write(pidFile, "\(running)")
            } else {
                try launch()
            }
            try waitRunning(within: TestHostLayout.readyTimeout, until: Clock.now + Double(TestHostLayout.readyTimeout))
        }
    }

    var pidFile: String { host.state.hostFile(host.host, "avahi.pid") }
    var logFile: String { host.state.hostFile(host.host, "avahi.log") }

    /// Starts the daemon in the background, recording its pid. Does not wait.
    func launch() throws(TestHostError) {
        // A pid file left by a killed daemon could name a live process of the machine (the pid namespace is shared).
        unlink("/proc/\(holder)/root/run/avahi-daemon/pid")
        // A session of its own, away from the caller's terminal. nsenter does not fork (no pid namespace): the pid
        // is the daemon's.
        let command = [
            "nsenter", "-t", "\(holder)", "-n", "-m", "--", "avahi-daemon", "-f",
            host.state.hostFile(host.host, "conf"),
            "--no-drop-root", "--no-chroot",
        ]
        let pid: pid_t
        do {
            pid = try CommandRunner.spawnDetached(command, log: logFile)
        } catch {
            throw TestHostError.failed("\(host.namespace): \(error)")
        }
        try LabStateDirectory.write(pidFile, "\(pid)")
    }

    /// Whether the daemon owns its D-Bus name and reports state 2 (AVAHI_SERVER_RUNNING): the host name is
    /// established and services can be published. The host's system bus is reached through the holder's root.
    func isRunning() -> Bool {
        let bus = "--bus=unix:path=/proc/\(holder)/root/run/dbus/system_bus_socket"
        // NameHasOwner first: a call to a name without owner would try D-Bus activation.
        let owner = try? CommandRunner.result(
            [
                "dbus-send", bus, "--print-reply", "--reply-timeout=1000", "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Avahi",
            ], timeout: 5)
        guard let owner, owner.status == 0, owner.stdout.contains("boolean true") else { return false }
        let state = try? CommandRunner.result(
            [
                "dbus-send", bus, "--print-reply", "--reply-timeout=1000", "--dest=org.freedesktop.Avahi", "/",
                "org.freedesktop.Avahi.Server.GetState",
            ], timeout: 5)
        return state.map { $0.status == 0 && $0.stdout.contains("int32 2") } ?? false
    }

    /// Waits until the daemon runs, until `deadline` (``Clock``, `timeout` seconds from the start); fails naming the
    /// host, with the end of its log, as soon as the daemon has exited or once the deadline has passed.
    func waitRunning(within timeout: Int, until deadline: Double) throws(TestHostError) {
        while !isRunning() {
            var why = ""
            let pid = LabStateDirectory.readPID(pidFile) ?? 0
            if !ProcessTable.isLive(pid) {
                CommandRunner.reap([pid])
                why = "avahi-daemon exited"
            }
            if Clock.now >= deadline { why = "avahi-daemon not running after \(timeout) s" }
            if !why.isEmpty {
                let log = LabStateDirectory.read(logFile).map { $0.split(separator: "\n").suffix(5) } ?? []
                throw TestHostError.failed(
                    "\(host.namespace): \(why); the end of its log:" + log.map { "\n" + $0 }.joined())
            }
            Clock.sleep(0.1)
        }
    }

    /// Stops every avahi-daemon of the host's network namespace: TERM, KILL after 5 s, a failure after 10 s.
    func stop() throws(TestHostError) {
        var tries = 0
        while case let pids = NetworkNamespace.pids(host.namespace, named: "avahi-daemon"), !pids.isEmpty {
            ProcessTable.signal(pids, tries < 50 ? SIGTERM : SIGKILL)
            tries += 1
            guard tries <= 100 else {
                throw TestHostError.failed(
                    "\(host.namespace): avahi-daemon \(pids.map(String.init).joined(separator: " ")) does not stop")
            }
            Clock.sleep(0.1)
            CommandRunner.reap(pids)
        }
        unlink(pidFile)
    }
}
