import Foundation

/// A process running inside a test host, whose stdout lines are parsed as JSON objects.
public final class HostProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let lock = NSLock()
    private var lines: [[String: Any]] = []
    private var buffer = Data()
    private let stderrPipe = Pipe()

    init(arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let output = Pipe()
        process.standardOutput = output
        process.standardError = stderrPipe
        process.standardInput = input
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.received(data)
        }
        try process.run()
    }

    deinit { stop() }

    /// The process's pid (the command itself: `scripts/testnet exec` replaces itself with it).
    public var pid: Int32 { process.processIdentifier }

    /// JSON objects printed so far.
    public var events: [[String: Any]] { lock.withLock { lines } }

    /// Sends one line to the process's stdin.
    public func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Waits up to `timeout` seconds for an event matching `predicate`; returns it, or nil on timeout.
    public func waitFor(timeout: Double, _ predicate: ([String: Any]) -> Bool) async -> [String: Any]? {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        var seen = 0
        while ContinuousClock.now < deadline {
            let current = events
            if let match = current[seen...].first(where: predicate) { return match }
            seen = current.count
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Sends SIGTERM, then SIGKILL if it has not exited within two seconds, and waits for it.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Whether the process still runs.
    public var isRunning: Bool { process.isRunning }

    /// What the process printed on stderr so far (for failure messages); only after it exited.
    public var stderrText: String {
        guard !process.isRunning else { return "" }
        return String(decoding: stderrPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    private func received(_ data: Data) {
        lock.withLock {
            buffer.append(data)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                    lines.append(object)
                }
            }
        }
    }
}
