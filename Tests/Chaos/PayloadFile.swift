import Crypto
import Foundation
import TestSupport

/// Files of random bytes that the tool writes into a test host for its daemon to send, and their SHA-256.
enum PayloadFile {
    /// Writes `count` bytes drawn from `seed` to `path` and returns their SHA-256 (hex).
    static func write(count: Int, seed: UInt64, to path: String) throws -> String {
        var random = SplitMix64(seed: seed)
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for index in words.indices { words[index] = random.next() }
        let bytes = words.withUnsafeBytes { Data($0.prefix(count)) }
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: path))
        return sha256(bytes)
    }

    /// The SHA-256 (hex) of the file at `path`, nil when it cannot be read.
    static func sha256(ofFileAt path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hash = SHA256()
        while let piece = try? handle.read(upToCount: 1 << 20), !piece.isEmpty { hash.update(data: piece) }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    static func sha256(_ bytes: Data) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }
}
