import Foundation

/// A process running inside a test host, whose stdout lines are parsed as JSON objects.
public final class HostProcess: @unchecked Sendable {
    private let child: ChildProcess
    private let lock = NSLock()
    private var lines: [[String: Any]] = []
    private var times: [ContinuousClock.Instant] = []
    private var cursor = 0
    private var errorText = Data()

    init(arguments: [String]) throws {
        child = try ChildProcess(arguments)
        let child = self.child
        Thread.detachNewThread { [weak self] in
            var buffer = Data()
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(child.stdout, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                buffer.append(contentsOf: chunk[..<count])
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = buffer[buffer.startIndex..<newline]
                    if let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] {
                        self?.append(object)
                    }
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
        }
        Thread.detachNewThread { [weak self] in
            let data = ChildProcess.readAll(child.stderr)
            self?.lock.withLock { self?.errorText = data }
        }
    }

    deinit { stop() }

    /// Starts `arguments` on this machine (not in a test host).
    public static func local(_ arguments: [String]) throws -> HostProcess {
        try HostProcess(arguments: arguments)
    }

    /// The process's pid (the command itself: `lansession-testnet exec` replaces itself with it).
    public var pid: Int32 { child.pid }

    /// JSON objects printed so far.
    public var events: [[String: Any]] { lock.withLock { lines } }

    /// JSON objects printed so far, each with when it was read.
    public var timedEvents: [(at: ContinuousClock.Instant, event: [String: Any])] {
        lock.withLock { Array(zip(times, lines)).map { (at: $0.0, event: $0.1) } }
    }

    /// What the process wrote on stderr, once it has exited.
    public var stderr: String { lock.withLock { String(decoding: errorText, as: UTF8.self) } }

    /// Its exit status, once it has exited (128 + the signal when a signal ended it); -1 while it runs.
    public var exitStatus: Int32 { child.poll() ?? -1 }

    /// Whether the process still runs.
    public var isRunning: Bool { child.poll() == nil }

    /// Sends one line to the process's stdin.
    public func send(_ line: String) {
        child.write(Data((line + "\n").utf8))
    }

    /// Waits up to `timeout` seconds for an event matching `predicate` that no earlier `waitFor` returned or
    /// passed over; returns it, or nil on timeout. Events are consumed in order, like a queue.
    public func waitFor(timeout: Double, _ predicate: ([String: Any]) -> Bool) async -> [String: Any]? {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline {
            let match: [String: Any]? = lock.withLock {
                while cursor < lines.count {
                    let event = lines[cursor]
                    cursor += 1
                    if predicate(event) { return event }
                }
                return nil
            }
            if let match { return match }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Sends SIGTERM, then SIGKILL if it has not exited within two seconds, and waits for it.
    public func stop() {
        child.stop()
    }

    /// Sends SIGTERM and returns at once (``stop()`` reaps it).
    public func terminate() {
        child.signal(SIGTERM)
    }

    private func append(_ object: [String: Any]) {
        lock.withLock {
            lines.append(object)
            times.append(.now)
        }
    }
}
