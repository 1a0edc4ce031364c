import Crypto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file of a resource transfer, read by its sender or written by its receiver, with the SHA-256 of its bytes.
///
/// Blocking I/O: used from a thread pool, one call at a time (the session keeps at most one operation in flight per
/// file), never from the event loop.
final class ResourceFile: @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    private(set) var hasher = SHA256()
    /// Bytes read or written so far (the file's offset).
    private(set) var offset: UInt64 = 0

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// What a file of a resource is, for ``SessionEvent`` and the resume key.
    struct Metadata: Sendable {
        var size: UInt64
        var modified: Int64
        var inode: UInt64
    }

    /// Opens `path` for reading; regular files only.
    static func openForReading(_ path: String) throws(SessionError) -> (ResourceFile, Metadata) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw error("cannot open \(path)") }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let failure = error("cannot stat \(path)")
            close(descriptor)
            throw failure
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw SessionError(.invalidArgument, "\(path) is not a regular file")
        }
        let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        return (
            ResourceFile(path: path, descriptor: descriptor),
            Metadata(size: UInt64(info.st_size), modified: modified, inode: UInt64(info.st_ino))
        )
    }

    /// Opens (or creates) the partial file of a transfer for appending, and hashes what it already holds, up to
    /// `limit` bytes (more is cut off: a partial file never exceeds its resource).
    static func openPartial(_ path: String, limit: UInt64) throws(SessionError) -> ResourceFile {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw error("cannot create \(path)") }
        let file = ResourceFile(path: path, descriptor: descriptor)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while file.offset < limit {
            let wanted = Int(min(UInt64(buffer.count), limit - file.offset))
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, off_t(file.offset)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw error("cannot read \(path)")
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { file.hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            file.offset += UInt64(count)
        }
        guard ftruncate(descriptor, off_t(file.offset)) == 0 else { throw error("cannot truncate \(path)") }
        return file
    }

    /// Reads up to `count` bytes at the file's offset and hashes them; empty at the end.
    func read(upTo count: Int) throws(SessionError) -> [UInt8] {
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var filled = 0
            while filled < count {
                let got = pread(
                    descriptor, buffer.baseAddress! + filled, count - filled, off_t(offset + UInt64(filled)))
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    break
                }
                if got == 0 { break }
                filled += got
            }
            initialized = filled
        }
        if failure != 0 {
            errno = failure
            throw Self.error("cannot read \(path)")
        }
        hasher.update(data: bytes)
        offset += UInt64(bytes.count)
        return bytes
    }

    /// Reads up to `count` bytes in pieces of at most `pieceSize` (each one chunk on the wire); empty at the end.
    func read(upTo count: Int, pieceSize: Int) throws(SessionError) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        var left = count
        while left > 0 {
            let piece = try read(upTo: min(left, pieceSize))
            if piece.isEmpty { break }
            left -= piece.count
            pieces.append(piece)
        }
        return pieces
    }

    /// Hashes `count` bytes from the file's offset without keeping them (the prefix the receiver already holds).
    func skip(_ count: UInt64) throws(SessionError) {
        var left = count
        while left > 0 {
            let chunk = try read(upTo: Int(min(left, 1 << 20)))
            guard !chunk.isEmpty else { throw SessionError(.io, "\(path) is shorter than it was") }
            left -= UInt64(chunk.count)
        }
    }

    /// Appends `chunks` at the file's offset and hashes them.
    func write(_ chunks: [[UInt8]]) throws(SessionError) {
        for chunk in chunks {
            var done = 0
            while done < chunk.count {
                let wrote = chunk.withUnsafeBytes { raw in
                    pwrite(descriptor, raw.baseAddress! + done, chunk.count - done, off_t(offset + UInt64(done)))
                }
                if wrote < 0 {
                    if errno == EINTR { continue }
                    throw Self.error("cannot write \(path)")
                }
                done += wrote
            }
            hasher.update(data: chunk)
            offset += UInt64(chunk.count)
        }
    }

    /// The SHA-256 of every byte read or written, in hex (lowercase).
    var digest: [UInt8] { Array(hasher.finalize()) }

    /// Makes the written bytes durable, then gives the file the first of `candidate(1)`, `candidate(2)`, … (in its
    /// directory) that no file has, never replacing one, even one that lands at the same moment; returns where it is.
    func commit(choosing candidate: (Int) -> String) throws(SessionError) -> String {
        guard fsync(descriptor) == 0 else { throw Self.error("cannot sync \(path)") }
        var number = 1
        while true {
            let destination = candidate(number)
            // A hard link fails on a name that is taken, where a rename would replace it.
            if link(path, destination) == 0 {
                unlink(path)
                return destination
            }
            switch errno {
            case EEXIST:
                number += 1
            case EPERM, EXDEV, ENOTSUP, EMLINK:
                // No hard links here (some file systems): a rename to a name free a moment ago.
                guard !Self.exists(destination) else {
                    number += 1
                    continue
                }
                guard rename(path, destination) == 0 else {
                    throw Self.error("cannot move \(path) to \(destination)")
                }
                return destination
            default:
                throw Self.error("cannot move \(path) to \(destination)")
            }
        }
    }

    /// Removes the file (a cancelled or failed transfer).
    func remove() {
        unlink(path)
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Removes the regular files of `directory` whose names start with `prefix` and whose last write is older than
    /// `age`; returns their names. Files it cannot read or remove stay.
    static func removeFiles(in directory: String, prefix: String, olderThan age: Duration) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let cutoff = Int64(now.tv_sec) - age.components.seconds
        var removed: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(prefix) else { continue }
            let path = "\(directory)/\(name)"
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_mtim.tv_sec) < cutoff
            else { continue }
            if unlink(path) == 0 { removed.append(name) }
        }
        return removed
    }

    static func error(_ what: String) -> SessionError {
        let code = errno
        return SessionError(.io, "\(what): \(String(cString: strerror(code))) (errno \(code))")
    }
}

extension [UInt8] {
    /// Lowercase hex.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
