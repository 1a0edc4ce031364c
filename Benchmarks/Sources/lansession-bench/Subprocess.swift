import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program run as a child process (Foundation's `Process`), found on `PATH`; its stdin is a file or /dev/null.
///
/// `run` waits for it and throws a ``SubprocessError`` unless it exits with 0; `output` also returns what it wrote to
/// stdout; `start` leaves it running (``pid``, ``terminate(_:)``, ``wait()``). Children start with every signal at its
/// default, whatever this process ignores.
final class Subprocess: @unchecked Sendable {
    /// Where a stream of the child goes.
    enum Stream: Sendable {
        /// This process's own stream.
        case inherit
        /// /dev/null.
        case discard
        /// stdout: a pipe that ``wait()`` reads; stderr: a scratch file whose end ``SubprocessError`` carries.
        case capture
        /// This process's stderr (for build output, which must not reach stdout).
        case standardError
        /// A file, created or truncated.
        case file(String)
    }

    /// The program and its arguments.
    let command: [String]
    private let process = Process()
    private var outputPipe: Pipe?
    /// Where a captured stderr goes: a file, so that a child filling it never waits for this process to read.
    private var errorFile: String?
    /// The wait status, when this type reaped the child itself.
    private let reaped = Mutex<Int32?>(nil)

    init(
        _ command: [String], stdout: Stream = .inherit, stderr: Stream = .inherit, stdin: String? = nil,
        directory: String? = nil, environment: [String: String]? = nil
    ) {
        precondition(!command.isEmpty, "a command needs a program")
        self.command = command
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // env also puts every signal back to its default: this process ignores SIGINT and SIGTERM (``SignalTrap``).
        process.arguments = ["--default-signal"] + command
        process.standardInput = stdin.flatMap { FileHandle(forReadingAtPath: $0) } ?? FileHandle.nullDevice
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        if let environment { process.environment = environment }
        outputPipe = Self.attach(stdout, output: true) { process.standardOutput = $0 }
        if case .capture = stderr {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).err")
                .path
            errorFile = path
            _ = Self.attach(.file(path), output: false) { process.standardError = $0 }
        } else {
            _ = Self.attach(stderr, output: false) { process.standardError = $0 }
        }
    }

    private static func attach(_ stream: Stream, output: Bool, _ set: (Any?) -> Void) -> Pipe? {
        switch stream {
        case .inherit:
            set(output ? FileHandle.standardOutput : FileHandle.standardError)
        case .discard:
            set(FileHandle.nullDevice)
        case .standardError:
            set(FileHandle.standardError)
        case .capture:
            let pipe = Pipe()
            set(pipe)
            return pipe
        case .file(let path):
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            set(FileHandle(forWritingAtPath: path))
        }
        return nil
    }

    /// The child's process id (after ``start()``). `/usr/bin/env` execs the program, so it is the program's.
    var pid: Int32 { process.processIdentifier }

    var isRunning: Bool { process.isRunning && reaped.withLock { $0 } == nil }

    /// Starts the child without waiting for it.
    func start() throws(SubprocessError) {
        do {
            try process.run()
        } catch {
            throw SubprocessError(command: command, reason: .notStarted("\(error)"))
        }
    }

    /// Waits for the child to end; returns what it wrote to stdout when that is captured. Throws unless it exited 0.
    @discardableResult
    func wait() throws(SubprocessError) -> String {
        let output = outputPipe.map { String(decoding: $0.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        let (signalled, status) = waitForExit()
        var errors: String?
        if let errorFile {
            errors = try? String(contentsOfFile: errorFile, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: errorFile)
        }
        switch (signalled, status) {
        case (false, 0):
            return output ?? ""
        case (false, _):
            throw SubprocessError(command: command, reason: .exited(status), standardError: errors ?? "")
        case (true, _):
            throw SubprocessError(command: command, reason: .signalled(status), standardError: errors ?? "")
        }
    }

    /// Waits for the child's end: whether a signal ended it, and its exit status or the signal. Foundation's own
    /// watch can miss a child's SIGCHLD (a child of `scripts/testnet up` stayed a zombie, waited for forever), so the
    /// child is also reaped here when Foundation has not done it.
    private func waitForExit() -> (signalled: Bool, status: Int32) {
        var pause: UInt32 = 1_000
        while process.isRunning {
            if let status = reaped.withLock({ $0 }) { return Self.decode(status) }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                reaped.withLock { $0 = status }
                return Self.decode(status)
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
        return (process.terminationReason == .uncaughtSignal, process.terminationStatus)
    }

    /// A wait status as (signalled, exit status or signal).
    private static func decode(_ status: Int32) -> (signalled: Bool, status: Int32) {
        let signal = status & 0x7F
        return signal == 0 ? (false, (status >> 8) & 0xFF) : (true, signal)
    }

    /// Sends `signal` to the child if it still runs.
    func terminate(_ signal: Int32 = SIGTERM) {
        if isRunning { kill(process.processIdentifier, signal) }
    }

    /// Sends SIGTERM and waits for the end, whatever its status.
    func stop() {
        terminate()
        _ = waitForExit()
    }

    /// Runs `command` to its end; its stdout and stderr go where asked (this process's by default).
    static func run(_ command: [String], stdout: Stream = .inherit, stderr: Stream = .inherit) throws(SubprocessError) {
        let child = Subprocess(command, stdout: stdout, stderr: stderr)
        try child.start()
        try child.wait()
    }

    /// Runs `command` to its end and returns its stdout, without a trailing newline; its stderr is captured for the
    /// error unless asked otherwise.
    static func output(_ command: [String], stderr: Stream = .capture) throws(SubprocessError) -> String {
        let child = Subprocess(command, stdout: .capture, stderr: stderr)
        try child.start()
        var text = try child.wait()
        while text.last == "\n" { text.removeLast() }
        return text
    }
}
