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
/// a crash leaves either the old or the new content. The count in a directory in memory (tmpfs) is the exception, as
/// it is saved on the event loop before each increment is sent: there, it is written over the old one in place (see
/// ``save(localCount:)``). A file that exists but cannot be read back (garbage, empty,
/// truncated by hand, a key others may read) is never replaced silently: the daemon refuses to start and says which
/// file and what to do, because a new key is a new device, and a count started from 0 would count the same presses
/// twice on every peer.
final class StateStore: LocalCountStore {
    /// What the counter file holds, and how it is written.
    private struct CounterFile {
        /// The count it holds.
        var saved: UInt64 = 0
        /// Its length in bytes.
        var length = 0
        /// Open for writes in place, once one was made.
        var descriptor: Int32?
    }

    let directory: URL
    private let counter = Mutex(CounterFile())
    private let inMemory = Atomic<Bool>(false)

    /// Whether the directory is on a file system in memory (tmpfs, ramfs), where a save cannot wait for a device: the
    /// counter then saves on the event loop (see ``LocalCountStore/savesInPlace``). Known once ``load()`` has run.
    var savesInPlace: Bool { inMemory.load(ordering: .relaxed) }

    /// `statfs(2)`'s `f_type` of the file systems that live in memory.
    private static let memoryFileSystems: Set<Int> = [Int(TMPFS_MAGIC), Int(RAMFS_MAGIC)]

    init(directory: URL) {
        self.directory = directory
        self.counterFile = directory.appendingPathComponent("counter")
        self.counterPath = counterFile.path
    }

    deinit {
        if let descriptor = counter.withLock({ $0.descriptor }) { close(descriptor) }
    }

    var keyFile: URL { directory.appendingPathComponent("device-key") }
    let counterFile: URL
    /// ``counterFile``'s path, made once: a save runs per increment, on the event loop when it saves in place.
    private let counterPath: String
    var trustedDevicesFile: URL { directory.appendingPathComponent("trusted-devices.json") }
    /// The members the session last saw, for it to know them at once after a restart.
    var membersFile: URL { directory.appendingPathComponent("members.json") }

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
                counter.withLock { $0 = CounterFile(saved: 0, length: 2) }
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
        counter.withLock { $0 = CounterFile(saved: count, length: countText.utf8.count) }
        return Identity(device: device, localCount: count, isNew: false)
    }

    /// Makes `count` durable before the session sends it, one call at a time: the file replaced and fsynced, off the
    /// event loop; or, in a directory in memory (``savesInPlace``), on the loop, written over the old count in place
    /// with one write on a descriptor kept open, where a new file and a rename would cost the increment more than
    /// all the rest of its way to the socket. That write is whole or not made at all however the process ends (a
    /// few bytes in the file's one page), leaves nothing of the old count behind (a count only grows, and so does
    /// its text; a file that holds a longer text is replaced instead), and there is no device to sync.
    func save(localCount count: UInt64) throws {
        let inMemory = savesInPlace
        try counter.withLock { counter throws(StateError) in
            guard count > counter.saved else { return }
            let text = Array("\(count)\n".utf8)
            if !inMemory || text.count < counter.length || !writeInPlace(text, &counter) {
                try writeDurably(text, to: counterPath)
                if let descriptor = counter.descriptor { close(descriptor) }  // it holds the replaced file
                counter.descriptor = nil
            }
            counter.saved = count
            counter.length = text.count
        }
    }

    /// Writes `text` over the counter file's start; false when it could not (then the file is to be replaced).
    private func writeInPlace(_ text: [UInt8], _ counter: inout CounterFile) -> Bool {
        if counter.descriptor == nil {
            let descriptor = open(counterPath, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return false }
            counter.descriptor = descriptor
        }
        guard let descriptor = counter.descriptor else { return false }
        var written: Int
        repeat {
            written = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        } while written < 0 && errno == EINTR
        return written == text.count
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
        try writeDurably(Array(text.utf8), to: url.path)
    }

    private func writeDurably(_ bytes: [UInt8], to path: String) throws(StateError) {
        do {
            try AtomicFile.write(bytes, to: path)
        } catch {
            throw StateError(path, error.message)
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
