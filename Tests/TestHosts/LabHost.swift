#if canImport(Glibc)
    import Glibc
#endif

/// Host I of a lab that is up, as its state describes it: its namespace, holder and addresses.
public struct LabHost: Sendable {
    /// The lab's layout.
    public let layout: TestHostLayout
    /// The lab's state.
    public let state: LabStateDirectory
    /// The host's number, from 1.
    public let host: Int

    /// Host `host` (as given on a command line) of lab `name`: a bad argument for a bad lab name, a failure if there
    /// is no such lab or host.
    public init(lab name: String, host: String) throws(TestHostError) {
        try TestHostLayout.checkName(name)
        state = LabStateDirectory(name: name)
        layout = try state.layout()
        self.host = try layout.host(host)
    }

    /// The host's network namespace.
    public var namespace: String { layout.hostNamespace(host) }

    /// The pid of the host's holder, checked to still live in the host's network namespace: `nsenter -t PID -n -m`
    /// enters the host, `/proc/PID/root` is its file system.
    public func holderPID() throws(TestHostError) -> pid_t {
        guard let pid = LabStateDirectory.readPID(state.hostFile(host, "pid")) else {
            throw TestHostError.failed("\(namespace): no holder recorded")
        }
        guard NetworkNamespace.contains(pid, namespace) else {
            throw TestHostError.failed("\(namespace): holder \(pid) is gone (ttl expired?)")
        }
        return pid
    }

    /// The host's IPv4 address on network `network` (1 or 2), as recorded.
    public func address(network: Int = 1) throws(TestHostError) -> String {
        if network == 2 {
            guard let address = LabStateDirectory.read(state.hostFile(host, "addr2")) else {
                throw TestHostError.failed("lab \(layout.name) has one network")
            }
            return address
        }
        guard let address = LabStateDirectory.read(state.hostFile(host, "addr")) else {
            throw TestHostError.failed("\(namespace): no address recorded")
        }
        return address
    }
}
