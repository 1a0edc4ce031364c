#if canImport(Glibc)
    import Glibc
#endif

/// Runs the commands that make, change and remove labs: each started with posix_spawn, with no signal blocked and
/// default signal handling (a test runner's threads block most signals, and its children would inherit that).
public enum CommandRunner {
    /// What a finished command printed and returned.
    public struct Result: Sendable, Equatable {
        /// Exit status (128 + the signal when a signal ended it).
        public var status: Int32
        /// Everything printed on stdout.
        public var stdout: String
        /// Everything printed on stderr.
        public var stderr: String
    }

    /// Runs `arguments` (the command found on PATH) to completion, `input` on its stdin, killing it after `timeout`
    /// seconds; throws ``CommandFailure`` unless it exits with status 0, and returns its stdout.
    @discardableResult
    public static func run(
        _ arguments: [String], input: String? = nil, timeout: Double = 10
    ) throws(CommandFailure)
        -> String
    {
        let result = try self.result(arguments, input: input, timeout: timeout)
        guard result.status == 0 else {
            throw CommandFailure(command: arguments, status: result.status, stderr: result.stderr)
        }
        return result.stdout
    }

    /// Runs `arguments` to completion like ``run(_:input:timeout:)``, whatever its exit status; throws only when it
    /// cannot be started.
    public static func result(
        _ arguments: [String], input: String? = nil, timeout: Double = 10
    ) throws(CommandFailure)
        -> Result
    {
        var input0: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        guard pipe(&input0) == 0, pipe(&output) == 0, pipe(&errors) == 0 else {
            for fd in input0 + output + errors where fd >= 0 { close(fd) }
            throw CommandFailure(command: arguments, status: -1, stderr: "pipe: \(String(cString: strerror(errno)))")
        }
        // No child but this one may inherit these pipes: an inherited write end would keep a reader waiting.
        for fd in input0 + output + errors { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let pid: pid_t
        do {
            pid = try spawn(arguments, stdin: input0[0], stdout: output[1], stderr: errors[1], newSession: false)
        } catch {
            for fd in input0 + output + errors { close(fd) }
            throw error
        }
        close(input0[0])
        close(output[1])
        close(errors[1])
        var pending = Array((input ?? "").utf8)[...]
        var writer = input0[1]
        if pending.isEmpty {
            close(writer)
            writer = -1
        } else {
            _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK)
        }
        var readers = [output[0], errors[0]]
        var collected: [[UInt8]] = [[], []]
        let deadline = Clock.now + timeout
        var timedOut = false
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while readers.contains(where: { $0 >= 0 }) || writer >= 0 {
            let remaining = deadline - Clock.now
            if remaining <= 0 {
                timedOut = true
                kill(pid, SIGKILL)
                break
            }
            var fds = readers.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            fds.append(pollfd(fd: writer, events: Int16(POLLOUT), revents: 0))
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining, 1) * 1000) + 1)
            if ready < 0 && errno != EINTR { break }
            for index in 0..<2 where readers[index] >= 0 && fds[index].revents != 0 {
                let count = read(readers[index], &chunk, chunk.count)
                if count > 0 {
                    collected[index] += chunk[..<count]
                } else if count == 0 || errno != EINTR && errno != EAGAIN {
                    close(readers[index])
                    readers[index] = -1
                }
            }
            if writer >= 0 && fds[2].revents != 0 {
                let count = pending.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
                if count > 0 { pending = pending.dropFirst(count) }
                if pending.isEmpty || count < 0 && errno != EAGAIN && errno != EINTR {
                    close(writer)
                    writer = -1
                }
            }
        }
        for fd in readers + [writer] where fd >= 0 { close(fd) }
        var status = wait(pid)
        if timedOut { status = 124 }
        return Result(
            status: status, stdout: String(decoding: collected[0], as: UTF8.self),
            stderr: String(decoding: collected[1], as: UTF8.self) + (timedOut ? "timed out after \(timeout) s" : ""))
    }

    /// Starts `arguments` in a session of its own, its stdin /dev/null and its output appended to the file `log` (or
    /// /dev/null), and returns its pid without waiting. The process is remembered, so that this process can collect
    /// its exit (``reap(_:)``) once a lab has ended it.
    public static func spawnDetached(_ arguments: [String], log: String? = nil) throws(CommandFailure) -> pid_t {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        let output = log.map { open($0, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) } ?? null
        defer {
            close(null)
            if output != null && output >= 0 { close(output) }
        }
        guard null >= 0, output >= 0 else {
            throw CommandFailure(
                command: arguments, status: -1,
                stderr: "cannot open \(log ?? "/dev/null"): \(String(cString: strerror(errno)))")
        }
        let pid = try spawn(arguments, stdin: null, stdout: output, stderr: output, newSession: true)
        DetachedProcesses.shared.add(pid)
        return pid
    }

    /// Collects the exit of those of `pids` that this process started detached and that have exited (so that they
    /// leave no zombie); other pids are left alone.
    public static func reap(_ pids: [pid_t]) {
        DetachedProcesses.shared.reap(pids)
    }

    /// Starts `arguments` (a bare name is looked up on PATH) with `stdin`, `stdout` and `stderr` as its 0, 1 and 2, no
    /// signal blocked and every handler the default, in a session of its own when `newSession`; returns its pid.
    public static func spawn(
        _ arguments: [String], stdin: Int32, stdout: Int32, stderr: Int32, newSession: Bool
    )
        throws(CommandFailure) -> pid_t
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc)
        posix_spawnattr_setflags(
            &attributes, Int16(Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | (newSession ? setsid : 0)))
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard code == 0 else {
            throw CommandFailure(
                command: arguments, status: -1, stderr: "cannot start: \(String(cString: strerror(code)))")
        }
        return pid
    }

    /// Waits for child `pid` and returns its exit status (128 + the signal when a signal ended it).
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}
