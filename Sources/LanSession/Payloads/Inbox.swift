import NIOCore
import NIOPosix
import WireCodec

/// Where resources (files) from peers land: a partial file per transfer, named by its opener and resume key, and the
/// verified file moved in under the resource's name. Every file operation runs on ``FileThreads``, one at a time per
/// file; the results come back on the session's loop.
struct Inbox {
    /// The directory.
    let directory: String
    /// Holds writes where a test says; nil in use.
    let gate: InboxGate?

    /// The partial file of the transfer `key` from `peer`, opened (or created) and hashed as far as it goes, up to
    /// `size` bytes.
    func openPartial(
        from peer: PeerID, key: [UInt8], size: UInt64, on loop: any EventLoop
    ) -> EventLoopFuture<ResourceFile> {
        let path = "\(directory)/.partial-\(peer)-\(key.hexString)"
        return FileThreads.run(on: loop) { () throws -> ResourceFile in
            try ResourceFile.openPartial(path, limit: size)
        }
    }

    /// Appends `chunks` to `file`; succeeds with the bytes it holds then.
    func write(_ chunks: [[UInt8]], to file: ResourceFile, on loop: any EventLoop) -> EventLoopFuture<UInt64> {
        let gate = self.gate
        return FileThreads.run(on: loop) { () throws -> UInt64 in
            gate?.pass(at: file.offset)
            try file.write(chunks)
            return file.offset
        }
    }

    /// Syncs `file` and moves it into the inbox as `name`, or `name (2)`, … when taken (never over another file, even
    /// one that lands at the same moment); succeeds with where it landed.
    func commit(_ file: ResourceFile, as name: String, on loop: any EventLoop) -> EventLoopFuture<String> {
        let directory = self.directory
        return FileThreads.run(on: loop) { () throws -> String in
            try file.commit { number in Self.path(in: directory, for: name, number: number) }
        }
    }

    /// Removes `file` (a cancelled transfer's partial file).
    func remove(_ file: ResourceFile) {
        FileThreads.pool.submit { _ in file.remove() }
    }

    /// Removes, off the loop, the partial files whose last write is older than `lifetime`: transfers abandoned for
    /// good. Succeeds with the names removed.
    func removePartialFiles(olderThan lifetime: Duration, on loop: any EventLoop) -> EventLoopFuture<[String]> {
        let directory = self.directory
        return FileThreads.run(on: loop) { () -> [String] in
            ResourceFile.removeFiles(in: directory, prefix: ".partial-", olderThan: lifetime)
        }
    }

    // MARK: - Names

    /// `name` itself, if it is a file name the inbox takes (docs/wire-format.md, section 10.3): not empty, no `/` and
    /// no NUL, not `.` or `..`, and not one of the inbox's partial files (`.partial-…`). Anything else is declined,
    /// never cut to a part of it: `dir/x` or `../x` does not land as `x`.
    static func safeFileName(_ name: String) -> String? {
        guard !name.isEmpty, name != ".", name != "..", !name.hasPrefix(".partial-"),
            !name.utf8.contains(UInt8(ascii: "/")), !name.utf8.contains(0)
        else { return nil }
        return name
    }

    /// `inbox/name` for the first try (`number` 1), then `inbox/name (2)`, `inbox/name (3)`, … (before the extension).
    static func path(in inbox: String, for name: String, number: Int) -> String {
        guard number > 1 else { return "\(inbox)/\(name)" }
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let stem = dot.map { String(name[..<$0]) } ?? name
        let suffix = dot.map { String(name[$0...]) } ?? ""
        return "\(inbox)/\(stem) (\(number))\(suffix)"
    }
}
