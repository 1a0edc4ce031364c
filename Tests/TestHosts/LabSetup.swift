#if canImport(Glibc)
    import Glibc
#endif

/// The steps that make a lab: a unique name and its state directory, the reaper, the namespaces with IPv6 disabled,
/// the switch's bridges (multicast snooping off) and ports, each host's interfaces, addresses and neighbours, the
/// holders with their mount namespace and tmpfs /run, and each host's D-Bus and avahi-daemon, waited for until they
/// run. A failure on the way tears down what was made.
public struct LabSetup: Sendable {
    /// The lab's name starts with this (a lower-case letter, then up to 19 of a-z, 0-9 and '-').
    public var prefix = LabSetup.defaultPrefix
    /// Hosts, 1...64.
    public var hostCount: Int
    /// Networks, 1 or 2.
    public var networks = 1
    /// Seconds until the reaper tears the lab down.
    public var ttl = 600
    /// The executable the reaper runs as `COMMAND down NAME`: this package's lansession-testnet.
    public var downCommand: String

    /// The environment variable that names the prefix of a run's labs, so that the run can tell its own labs from
    /// another run's on the same machine (scripts/test sets it, and removes only its own labs at the end).
    public static let prefixVariable = "LANSESSION_LAB_PREFIX"

    /// The prefix of new labs: ``prefixVariable`` when it is set to a valid prefix, "lst" otherwise.
    public static var defaultPrefix: String {
        guard let value = getenv(prefixVariable).map({ String(cString: $0) }), TestHostLayout.isPrefix(value) else {
            return "lst"
        }
        return value
    }

    /// A lab of `hostCount` hosts, whose reaper runs `downCommand down NAME`.
    public init(hostCount: Int, downCommand: String) {
        self.hostCount = hostCount
        self.downCommand = downCommand
    }

    /// Makes the lab and returns its layout once every host's avahi-daemon runs.
    public func up() throws(TestHostError) -> TestHostLayout {
        guard TestHostLayout.isPrefix(prefix) else { throw TestHostError(.badArgument, "bad prefix \(prefix)") }
        guard (1...999_999).contains(ttl) else { throw TestHostError(.badArgument, "bad ttl \(ttl)") }
        // Checks the host count and networks before anything is made.
        _ = try TestHostLayout(name: prefix, hostCount: hostCount, networks: networks)
        try LabRequirements.check()
        guard access(downCommand, X_OK) == 0 else {
            throw TestHostError.failed("cannot run \(downCommand), which tears the lab down when its time is up")
        }
        let (layout, state) = try reserveName()
        do {
            try build(layout, state: state)
        } catch {
            do {
                try LabTeardown.down(layout.name)
            } catch {
                throw TestHostError.failed("\(error.description)\n\(layout.name): teardown after failure incomplete")
            }
            throw error
        }
        return layout
    }

    /// A unique name: the state directory is created atomically, and no namespace of that name may exist.
    func reserveName() throws(TestHostError) -> (TestHostLayout, LabStateDirectory) {
        let namespaces = NetworkNamespace.names()
        for _ in 1...20 {
            let name = TestHostLayout.labName(prefix: prefix, random: UInt32.random(in: 0...UInt32.max))
            guard !namespaces.contains(where: { TestHostLayout.isNamespace($0, ofLab: name) }) else { continue }
            let state = LabStateDirectory(name: name)
            if try state.create() {
                return (try TestHostLayout(name: name, hostCount: hostCount, networks: networks), state)
            }
        }
        throw TestHostError.failed("no free lab name after 20 tries")
    }

    func build(_ layout: TestHostLayout, state: LabStateDirectory) throws(TestHostError) {
        try LabStateDirectory.write(state.file("hosts"), "\(layout.hostCount)")
        try LabStateDirectory.write(state.file("ttl"), "\(ttl)")
        try LabReaper.start(lab: layout.name, ttl: ttl, command: downCommand, state: state)
        let deadline = Clock.now + Double(layout.readyTimeout)
        for namespace in [layout.switchNamespace] + layout.hosts.map(layout.hostNamespace) {
            try step { () throws(CommandFailure) in
                try NetworkNamespace.add(namespace)
                // Before the namespace gets its interfaces, so that they inherit it ("default").
                try CommandRunner.run(["ip", "netns", "exec", namespace, "sh", "-c", Self.noIPv6])
            }
        }
        try step { () throws(CommandFailure) in
            try CommandRunner.run(
                ["ip", "-n", layout.switchNamespace, "-batch", "-"],
                input: layout.switchCommands.joined(separator: "\n") + "\n", timeout: 60)
        }
        for host in layout.hosts {
            for network in layout.networkNumbers {
                try LabStateDirectory.write(
                    state.hostFile(host, network == 1 ? "addr" : "addr2"), layout.address(host, network: network))
            }
            try step { () throws(CommandFailure) in
                try CommandRunner.run(
                    ["ip", "-n", layout.hostNamespace(host), "-batch", "-"],
                    input: layout.hostCommands(host).joined(separator: "\n") + "\n", timeout: 30)
            }
            try LabStateDirectory.write(state.hostFile(host, "conf"), layout.avahiConfiguration(host))
            // The holder outlives the reaper by a minute, so that it ends even if the reaper was killed.
            try HolderProcess.start(host, of: layout, seconds: ttl + 60, state: state)
        }
        try HolderProcess.waitStarted(layout, state: state, until: deadline)
        let avahis = try layout.hosts.map { host throws(TestHostError) in
            try HostAvahi(LabHost(lab: layout.name, host: "\(host)"))
        }
        for avahi in avahis { try avahi.launch() }
        for avahi in avahis { try avahi.waitRunning(within: layout.readyTimeout, until: deadline) }
    }

    /// Runs one step's commands, a failure naming the command.
    func step(_ body: () throws(CommandFailure) -> Void) throws(TestHostError) {
        do {
            try body()
        } catch {
            throw TestHostError.failed(error.description)
        }
    }

    /// Disables IPv6 in a namespace, if the kernel has it: the lab is IPv4 only, so that a resolved service has
    /// exactly one address per network.
    static let noIPv6 =
        "d=/proc/sys/net/ipv6/conf; [ ! -d $d ] || { echo 1 >$d/all/disable_ipv6; echo 1 >$d/default/disable_ipv6; }"
}
