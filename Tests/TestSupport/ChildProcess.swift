import Foundation
import TestHosts

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with posix_spawn, with pipes for stdin, stdout and stderr.
///
/// Foundation's `Process` is not used: inside the test runner, whose threads block most signals, it was seen not to
/// notice its children's exit. Here the child starts with no signal blocked and default handlers, and its exit is
/// collected with `waitpid` by pid.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    /// The child's stdin, until ``closeStdin()``; -1 after.
    private(set) var stdin: Int32
    let stdout: Int32
    let stderr: Int32
    private let lock = NSLock()
    private var exitStatus: Int32?

    init(_ arguments: [String]) throws {
        var input: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        guard pipe(&input) == 0, pipe(&output) == 0, pipe(&errors) == 0 else {
            throw TestLabError("pipe: \(String(cString: strerror(errno)))")
        }
        // No child but this one may inherit these pipes: an inherited write end would keep a reader waiting.
        for fd in input + output + errors { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let pid: pid_t
        do {
            pid = try CommandRunner.spawn(
                arguments, stdin: input[0], stdout: output[1], stderr: errors[1], newSession: false)
        } catch {
            for fd in input + output + errors { close(fd) }
            throw TestLabError("cannot start \(arguments[0]): \(error.stderr)")
        }
        close(input[0])
        close(output[1])
        close(errors[1])
        self.pid = pid
        self.stdin = input[1]
        self.stdout = output[0]
        self.stderr = errors[0]
    }

    deinit {
        closeStdin()
        close(stdout)
        close(stderr)
    }

    /// Closes the child's stdin once (a second close could close a descriptor opened since, in another thread).
    func closeStdin() {
        lock.withLock {
            guard stdin >= 0 else { return }
            close(stdin)
            stdin = -1
        }
    }

    /// Reads `fd` until end of file.
    static func readAll(_ fd: Int32) -> Data {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count > 0 {
                data.append(contentsOf: chunk[..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return data
            }
        }
    }

    /// Writes all of `data` to the child's stdin.
    func write(_ data: Data) {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = lock.withLock {
                    stdin < 0 ? -1 : Glibc.write(stdin, raw.baseAddress! + offset, raw.count - offset)
                }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// The exit status if the child has exited, collecting it; nil while it runs.
    func poll() -> Int32? {
        lock.withLock {
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
            exitStatus = Self.decode(status)
            return exitStatus
        }
    }

    /// Waits for the child to exit and returns its status (128 + signal when killed by one).
    func wait() -> Int32 {
        while true {
            if let status = poll() { return status }
            usleep(5_000)
        }
    }

    /// Sends `signal` if the child still runs.
    func signal(_ signal: Int32) {
        if poll() == nil { kill(pid, signal) }
    }

    /// SIGTERM, then SIGKILL after `grace` seconds, then waits.
    func stop(grace: Double = 2) {
        signal(SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while poll() == nil && Date() < deadline { usleep(10_000) }
        signal(SIGKILL)
        _ = wait()
    }

    private static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}
