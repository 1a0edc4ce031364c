import Foundation
import Testing

@testable import sessiond

/// The count sessiond saves before each increment is sent: replaced whole on a disk, written in place in memory.
@Suite("StateStore's count")
struct StateStoreTests {
    /// Whether `/dev/shm` is a file system in memory here.
    static var memoryDirectoryAvailable: Bool {
        let store = StateStore(directory: URL(fileURLWithPath: "/dev/shm/statestore-probe-\(getpid())"))
        defer { try? FileManager.default.removeItem(at: store.directory) }
        return (try? store.load()) != nil && store.savesInPlace
    }

    /// A fresh state directory under `parent`, loaded.
    static func store(under parent: String) throws -> StateStore {
        let directory = URL(fileURLWithPath: parent).appendingPathComponent("statestore-\(UUID().uuidString)")
        let store = StateStore(directory: directory)
        _ = try store.load()
        return store
    }

    static func inode(_ path: String) -> UInt64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64) ?? nil
    }

    @Test(
        "in memory the count is written in place, in one file that is never replaced, and read back as saved",
        .enabled(if: memoryDirectoryAvailable))
    func inPlace() throws {
        let store = try Self.store(under: "/dev/shm")
        defer { try? FileManager.default.removeItem(at: store.directory) }
        #expect(store.savesInPlace)
        try store.save(localCount: 9)
        let inode = Self.inode(store.counterFile.path)
        for count in [10, 11, 99, 100, 12_345] as [UInt64] { try store.save(localCount: count) }
        #expect(try String(contentsOf: store.counterFile, encoding: .utf8) == "12345\n")
        #expect(Self.inode(store.counterFile.path) == inode, "written in place, not replaced")
        try store.save(localCount: 7)  // below what is saved: nothing
        #expect(try String(contentsOf: store.counterFile, encoding: .utf8) == "12345\n")
        let again = StateStore(directory: store.directory)
        #expect(try again.load().localCount == 12_345)
    }

    @Test(
        "in memory, a count file that holds a longer text than the next count's is replaced, not written over",
        .enabled(if: memoryDirectoryAvailable))
    func longerTextReplaced() throws {
        let store = try Self.store(under: "/dev/shm")
        defer { try? FileManager.default.removeItem(at: store.directory) }
        try Data("0000042\n".utf8).write(to: store.counterFile)
        let reloaded = StateStore(directory: store.directory)
        #expect(try reloaded.load().localCount == 42)
        try reloaded.save(localCount: 43)
        #expect(try String(contentsOf: store.counterFile, encoding: .utf8) == "43\n")
        try reloaded.save(localCount: 44)
        #expect(try String(contentsOf: store.counterFile, encoding: .utf8) == "44\n")
    }

    @Test("on a disk (where the temporary directory is on one) the count file is replaced at each save")
    func replacedOnDisk() throws {
        let store = try Self.store(under: NSTemporaryDirectory())
        defer { try? FileManager.default.removeItem(at: store.directory) }
        try store.save(localCount: 1)
        let inode = Self.inode(store.counterFile.path)
        try store.save(localCount: 2)
        #expect(try String(contentsOf: store.counterFile, encoding: .utf8) == "2\n")
        if !store.savesInPlace { #expect(Self.inode(store.counterFile.path) != inode, "a new file, renamed over") }
        #expect(!FileManager.default.fileExists(atPath: store.counterFile.path + ".new"))
    }
}
