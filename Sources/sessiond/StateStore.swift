import BubblesAndCounter
import CFileSystem
import Foundation
import LanSession
import Synchronization
import WireCodec

#if canImport(Glibc)
    import Glibc
#endif

/// What sessiond keeps on disk: its device key (the peer id is derived from it), its trusted devices, and its own
/// count, made durable before an increment is sent.
///
/// Every file is written whole to a temporary file, fsynced, renamed over the old one, and the directory fsynced;
/// a crash leaves either the old or the new content. A file that exists but cannot be read back (garbage, empty,
/// truncated by hand, a key others may read) is never replaced silently: the daemon refuses to start and says which
/// file and what to do, because a new key is a new device, and a count started from 0 would count the same presses
/// twice on every peer.
final class StateStore: LocalCountStore {
    let directory: URL
    private let savedCount = Mutex<UInt64>(0)
    private let inMemory = Atomic<Bool>(false)

    /// Whether the directory is on a file system in memory (tmpfs, ramfs), where a save cannot wait for a device: the
    /// counter then saves on the event loop (see ``LocalCountStore/savesInPlace``). Known once ``load()`` has run.
    var savesInPlace: Bool { inMemory.load(ordering: .relaxed) }

    /// `statfs(2)`'s `f_type` of the file systems that live in memory.
    private static let memoryFileSystems: Set<Int> = [Int(TMPFS_MAGIC), Int(RAMFS_MAGIC)]

    init(directory: URL) {
        self.directory = directory
    }

    var keyFile: URL { directory.appendingPathComponent("device-key") }
    var counterFile: URL { directory.appendingPathComponent("counter") }
    var trustedDevicesFile: URL { directory.appendingPathComponent("trusted-devices.json") }

    /// What this peer is: its device keys and its own count, as stored.
    struct Identity {
        var device: DeviceIdentity
        var localCount: UInt64
        /// Whether the identity was created now (a first start).
        var isNew: Bool

        var peerID: PeerID { device.peerID }
    }

    /// Creates the directory (mode 0700) if needed, then reads the identity, or creates and stores one on a first
    /// start. Throws a ``StateError`` naming the file when a stored one cannot be read back.
    func load() throws(StateError) -> Identity {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StateError(directory.path, "cannot create the state directory: \(Self.describe(error))")
        }
        var fileSystem = statfs()
        if statfs(directory.path, &fileSystem) == 0 {
            inMemory.store(Self.memoryFileSystems.contains(Int(fileSystem.f_type)), ordering: .relaxed)
        }
        let countText = try read(counterFile)
        let isNew = !FileManager.default.fileExists(atPath: keyFile.path)
        if isNew && countText != nil {
            throw StateError(
                counterFile.path,
                "a count without a device key; restore \(keyFile.lastPathComponent) from a backup, or remove "
                    + "\(counterFile.lastPathComponent) to join as a new device")
        }
        let device: DeviceIdentity
        do {
            device = try DeviceIdentity.persistent(in: directory.path)
        } catch {
            // The message names the file itself.
            throw StateError(keyFile.path, error.message.replacingOccurrences(of: keyFile.path + " ", with: ""))
        }
        guard let countText else {
            if isNew {
                try writeDurably("0\n", to: counterFile)
                return Identity(device: device, localCount: 0, isNew: true)
            }
            throw StateError(
                counterFile.path,
                "missing next to device key \(device.peerID); restore it from a backup, or remove "
                    + "\(keyFile.lastPathComponent) too to join as a new device")
        }
        guard let count = Self.parseCount(countText) else {
            throw StateError(
                counterFile.path,
                "not a count (\(Self.quote(countText))); restore it from a backup, or remove it and "
                    + "\(keyFile.lastPathComponent) to join as a new device")
        }
        savedCount.withLock { $0 = count }
        return Identity(device: device, localCount: count, isNew: false)
    }

    /// Makes `count` durable (fsynced) before the session sends it. Called off the event loop, one call at a time.
    func save(localCount count: UInt64) throws {
        guard count > savedCount.withLock({ $0 }) else { return }
        try writeDurably("\(count)\n", to: counterFile)
        savedCount.withLock { $0 = max($0, count) }
    }

    /// Checks that `path` is a directory this process can write, or one it can create, with one line for people
    /// when it is not. `option` names the command-line option that gave the path (nil: the default path, whose
    /// missing parents are created).
    static func checkDirectory(_ path: String, option: String?) throws(DaemonError) {
        let name = option.map { "\($0) \(path)" } ?? "state directory \(path)"
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw DaemonError("\(name): not a directory") }
            guard access(path, W_OK | X_OK) == 0 else {
                throw DaemonError("\(name): cannot write in it: \(errnoText())")
            }
            return
        }
        guard errno == ENOENT else { throw DaemonError("\(name): \(errnoText())") }
        let parent = (path as NSString).deletingLastPathComponent
        guard stat(parent.isEmpty ? "." : parent, &info) == 0 else {
            guard errno == ENOENT else { throw DaemonError("\(name): \(parent): \(errnoText())") }
            guard option != nil else { return }  // the default path: its parents are created
            throw DaemonError("\(name): its parent \(parent) does not exist (create it first)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw DaemonError("\(name): \(parent) is not a directory") }
        guard access(parent.isEmpty ? "." : parent, W_OK | X_OK) == 0 else {
            throw DaemonError("\(name): cannot create it in \(parent): \(errnoText())")
        }
    }

    // MARK: - Files

    /// The file's text, nil when it does not exist.
    private func read(_ url: URL) throws(StateError) -> String? {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch {
            throw StateError(url.path, "cannot read it: \(Self.describe(error))")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw StateError(url.path, "not text (\(data.count) bytes); restore it from a backup")
        }
        return text
    }

    /// Decimal digits (no sign, no spaces), then an optional newline.
    static func parseCount(_ text: String) -> UInt64? {
        let line = text.hasSuffix("\n") ? String(text.dropLast()) : text
        guard !line.isEmpty, line.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return UInt64(line)
    }

    /// Writes a temporary file, fsyncs it, renames it over `url` and fsyncs the directory.
    private func writeDurably(_ text: String, to url: URL) throws(StateError) {
        do {
            try AtomicFile.write(Array(text.utf8), to: url.path)
        } catch {
            throw StateError(url.path, error.message)
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }

    private static func describe(_ error: any Error) -> String {
        if let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return error.localizedDescription
    }

    /// At most 40 characters of `text`, quoted, for a one-line message.
    private static func quote(_ text: String) -> String {
        text.isEmpty ? "it is empty" : "it holds \(String(text.prefix(40)).debugDescription)"
    }
}

/// A state file that cannot be read or written: the file, and what is wrong and what to do, in one line.
struct StateError: Error, CustomStringConvertible {
    let path: String
    let problem: String

    init(_ path: String, _ problem: String) {
        self.path = path
        self.problem = problem
    }

    var description: String { "\(path): \(problem)" }
}

extension UInt8 {
    /// An ASCII hex digit.
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
