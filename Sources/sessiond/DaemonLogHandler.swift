import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// sessiond's log lines on standard error: as swift-log's `StreamLogHandler` writes them, with milliseconds in the
/// time stamp (`2026-11-24T11:18:31.123+0000 notice sessiond: peer=… [LanSession] …`), so that an operator can order
/// what happened within a second, across daemons. Under systemd, when standard error is the journal's stream, each
/// line starts with its syslog priority instead (`<5>notice sessiond: …`, sd-daemon(3)): the journal keeps the level (so
/// `journalctl -p warning` finds the warnings) and stamps the time itself. Each line is one `write(2)`.
struct DaemonLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    /// Links are not encrypted (`--insecure`): every line says so.
    let insecure: Bool
    /// Standard error is the journal's stream: priorities, no time stamps.
    let journal: Bool

    init(label: String, level: Logger.Level, insecure: Bool = false, journal: Bool = Self.stderrIsJournal()) {
        self.label = label
        self.logLevel = level
        self.insecure = insecure
        self.journal = journal
    }

    /// The syslog priority of a level, as the journal reads it from a line's `<N>` prefix.
    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// systemd sets `JOURNAL_STREAM` to the device and inode of the stream it connects to the journal; standard error
    /// is that stream when they match (not when it was redirected elsewhere by a child's shell).
    static func stderrIsJournal(_ environment: String? = getenv("JOURNAL_STREAM").map { String(cString: $0) }) -> Bool {
        guard let environment else { return false }
        let parts = environment.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line =
            journal ? "<\(Self.syslogPriority(event.level))>\(event.level) " : Self.timestamp() + " \(event.level) "
        line += "\(label):"
        if insecure { line += " INSECURE(not encrypted, for measuring only)" }
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += " [\(event.source)] \(event.message)\n"
        let utf8 = Array(line.utf8)
        utf8.withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let count = write(STDERR_FILENO, bytes.baseAddress! + written, bytes.count - written)
                if count > 0 {
                    written += count
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// Local time with milliseconds and the UTC offset.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var local = tm()
        guard localtime_r(&seconds, &local) != nil else { return "<unknown>" }
        let milliseconds = Int(now.tv_nsec / 1_000_000)
        let fraction =
            milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return format("%Y-%m-%dT%H:%M:%S", &local) + "." + fraction + format("%z", &local)
    }

    private static func format(_ pattern: String, _ time: inout tm) -> String {
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, pattern, &time)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
