#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// The state of a lab: ${TMPDIR:-/tmp}/lansession-testnet/NAME/, with its host count and time to live, and per host
/// I the holder's pid (hI.pid), the address on each network (hI.addr, hI.addr2), the avahi-daemon's configuration,
/// pid and log (hI.conf, hI.avahi.pid, hI.avahi.log), the holder's log (hI.log), and the reaper's pid (reaper.pid).
/// Scripts read these files (mesh-bench reads hI.avahi.pid): their names and contents stay as they are.
public struct LabStateDirectory: Sendable {
    /// Where every lab's state directory is.
    public static var base: String {
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return temporary + "/lansession-testnet"
    }

    /// The lab's name.
    public let name: String
    /// The directory.
    public let path: String

    /// The state directory of lab `name`, which may not exist.
    public init(name: String) {
        self.name = name
        self.path = Self.base + "/" + name
    }

    /// The names of the labs with a state directory.
    public static func labNames() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        return names.filter { FileManager.default.fileExists(atPath: "\(base)/\($0)/hosts") }
    }

    /// Creates the directory if no other has this name; false if it exists.
    public func create() throws(TestHostError) -> Bool {
        do {
            try FileManager.default.createDirectory(atPath: Self.base, withIntermediateDirectories: true)
        } catch {
            throw TestHostError.failed("cannot create \(Self.base): \(error)")
        }
        return mkdir(path, 0o755) == 0
    }

    /// Removes the directory and everything in it.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// The path of file `file` in the directory.
    public func file(_ file: String) -> String { path + "/" + file }

    /// Host `host`'s file `suffix` (hI.pid, hI.addr, hI.avahi.pid, ...).
    public func hostFile(_ host: Int, _ suffix: String) -> String { file("h\(host).\(suffix)") }

    /// The text of `path`, without surrounding white space; nil if it cannot be read.
    public static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map {
            String(decoding: $0, as: UTF8.self).trimmed
        }
    }

    /// A pid read from `path`.
    public static func readPID(_ path: String) -> pid_t? { read(path).flatMap { pid_t($0) } }

    /// Writes `text` and a newline to `path`.
    public static func write(_ path: String, _ text: String) throws(TestHostError) {
        guard FileManager.default.createFile(atPath: path, contents: Data((text + "\n").utf8)) else {
            throw TestHostError.failed("cannot write \(path)")
        }
    }

    /// How many hosts the lab has, if its state is there.
    public var hostCount: Int? { Self.read(file("hosts")).flatMap { Int($0) } }

    /// The lab's layout, read from its state: a failure "no lab NAME" if there is none.
    public func layout() throws(TestHostError) -> TestHostLayout {
        guard access(file("hosts"), R_OK) == 0, let count = hostCount else {
            throw TestHostError.failed("no lab \(name)")
        }
        let networks = access(hostFile(1, "addr2"), F_OK) == 0 ? 2 : 1
        return try TestHostLayout(name: name, hostCount: count, networks: networks)
    }
}
