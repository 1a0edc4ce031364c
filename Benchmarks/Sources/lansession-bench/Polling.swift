import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Waiting for something a benchmark started (a daemon, a listener, a file's line) without a fixed sleep.
enum Polling {
    /// Checks `condition` every `interval` seconds, at most `attempts` times, until it holds; returns whether it did.
    @discardableResult
    static func until(_ attempts: Int, every interval: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        for _ in 0..<attempts {
            if try condition() { return true }
            usleep(UInt32(interval * 1_000_000))
        }
        return false
    }

    /// Whether the file at `path` holds `text` yet.
    static func file(_ path: String, contains text: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return String(decoding: data, as: UTF8.self).contains(text)
    }
}
