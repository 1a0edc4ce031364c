import Foundation
import WireCodec

#if canImport(Glibc)
    import Glibc
#endif

/// What sessiond keeps on disk: its peer id, and its own count, written durably before an increment is confirmed.
actor StateStore {
    let directory: URL
    private var savedCount: UInt64 = 0

    init(directory: URL) {
        self.directory = directory
    }

    private var peerIDFile: URL { directory.appendingPathComponent("peer-id") }
    private var counterFile: URL { directory.appendingPathComponent("counter") }

    /// Creates the directory (mode 0700) if needed.
    func prepare() throws {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// The stored peer id, or a new random one, stored now.
    func peerID() throws -> PeerID {
        if let text = try? String(contentsOf: peerIDFile, encoding: .utf8),
            let id = PeerID(hex: text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            return id
        }
        let id = PeerID.random()
        try writeDurably(id.description + "\n", to: peerIDFile)
        return id
    }

    /// The stored count of this peer's presses (0 when none).
    func localCount() -> UInt64 {
        let text = (try? String(contentsOf: counterFile, encoding: .utf8)) ?? ""
        savedCount = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        return savedCount
    }

    /// Makes sure a count of at least `count` is on disk (fsync'd) before returning.
    func save(localCount count: UInt64) throws {
        guard count > savedCount else { return }
        try writeDurably("\(count)\n", to: counterFile)
        savedCount = count
    }

    /// Writes a temporary file, fsyncs it, renames it over `url` and fsyncs the directory.
    private func writeDurably(_ text: String, to url: URL) throws {
        let temporary = url.appendingPathExtension("tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0 else { throw POSIXError(.EIO) }
        guard rename(temporary.path, url.path) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }
}
