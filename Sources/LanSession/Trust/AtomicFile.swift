#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes a small file so that it is either the old one or the new one, never half of either: a new file of mode
/// 0600 beside it, synced, renamed over it, and the directory synced. A failure (a full disk among others) leaves the
/// old file as it was and removes the new one. Blocking: call it off the event loop. The session keeps the device key
/// and the trusted devices with it, and sessiond its own small state (its counter, the page's token).
package enum AtomicFile {
    /// Replaces the file at `path` with `bytes`, durably; the error (``SessionError/Code/io``) carries errno's text.
    package static func write(_ bytes: [UInt8], to path: String) throws(SessionError) {
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ResourceFile.error("cannot create \(temporary)") }
        var offset = 0
        var failure: SessionError?
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                failure = ResourceFile.error("cannot write \(temporary)")
                break
            }
            offset += written
        }
        if failure == nil, fsync(descriptor) != 0 { failure = ResourceFile.error("cannot sync \(temporary)") }
        close(descriptor)
        if failure == nil, rename(temporary, path) != 0 { failure = ResourceFile.error("cannot rename to \(path)") }
        if let failure {
            unlink(temporary)
            throw failure
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let directoryDescriptor = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}
