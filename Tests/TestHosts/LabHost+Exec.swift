#if canImport(Glibc)
    import Glibc
#endif

extension LabHost {
    /// Replaces this process with `command` inside the host: in its network and mount namespaces, in the same
    /// directory as the caller if the host has it (else /), with the host's system bus whatever the environment
    /// says, with default signal handling and no signal blocked. The pid stays the same: the command's pid is the
    /// caller's. Exits 127 if the command is not found, 126 if it cannot be run.
    ///
    /// Joining a mount namespace needs a process of one thread: call this from a command line's main thread before
    /// anything starts a thread.
    public func execute(_ command: [String]) throws(TestHostError) -> Never {
        let holder = try holderPID()
        let network = open("/proc/\(holder)/ns/net", O_RDONLY | O_CLOEXEC)
        let mount = open("/proc/\(holder)/ns/mnt", O_RDONLY | O_CLOEXEC)
        guard network >= 0, mount >= 0 else {
            throw TestHostError.failed("\(namespace): cannot open holder \(holder)'s namespaces: \(Self.error())")
        }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let directory = getcwd(&buffer, buffer.count).map { String(cString: $0) } ?? "/"
        guard Self.setns(network, 0x4000_0000) == 0 else {  // CLONE_NEWNET
            throw TestHostError.failed("\(namespace): cannot enter its network namespace: \(Self.error())")
        }
        guard Self.setns(mount, 0x0002_0000) == 0 else {  // CLONE_NEWNS
            throw TestHostError.failed("\(namespace): cannot enter its mount namespace: \(Self.error())")
        }
        close(network)
        close(mount)
        // Entering a mount namespace moves to its root; go back to the caller's directory (same path in the host).
        if chdir(directory) != 0 { _ = chdir("/") }
        unsetenv("DBUS_SYSTEM_BUS_ADDRESS")
        SignalDispositions.reset()
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        execvp(command[0], argv)
        let code = errno
        let message = "testnet: \(command[0]): \(String(cString: strerror(code)))\n"
        _ = message.withCString { write(2, $0, strlen($0)) }
        exit(code == ENOENT ? 127 : 126)
    }

    static func error() -> String { String(cString: strerror(errno)) }

    /// The C library's setns(2), which Swift's Glibc module does not declare (a GNU extension).
    static func setns(_ fd: Int32, _ type: Int32) -> Int32 {
        typealias SetNS = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "setns") else {
            errno = ENOSYS
            return -1
        }
        return unsafeBitCast(symbol, to: SetNS.self)(fd, type)
    }
}
