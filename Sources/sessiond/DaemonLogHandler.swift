import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// sessiond's log lines on standard error: as swift-log's `StreamLogHandler` writes them, with milliseconds in the
/// time stamp (`2026-11-24T11:18:31.123+0000 notice sessiond: peer=… [LanSession] …`), so that an operator can order
/// what happened within a second, across daemons. Each line is one `write(2)`.
struct DaemonLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    /// Links are not encrypted (`--insecure`): every line says so.
    let insecure: Bool

    init(label: String, level: Logger.Level, insecure: Bool = false) {
        self.label = label
        self.logLevel = level
        self.insecure = insecure
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = Self.timestamp()
        line += " \(event.level) \(label):"
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
