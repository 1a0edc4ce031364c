#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension PeerID {
    /// The peer id kept in `directory/peer-id` (16 hex digits, as sessiond keeps it), made at random and saved
    /// atomically the first time. An application that gives a state directory keeps its identity across restarts:
    /// peers recognise it, and its interrupted transfers resume.
    ///
    /// - Throws: ``SessionError/Code/io`` with the system's reason when the directory or the file cannot be used,
    ///   and ``SessionError/Code/invalidConfiguration`` when the file holds something else than a peer id (it is
    ///   never overwritten).
    public static func persistent(in directory: String) throws(SessionError) -> PeerID {
        let path = directory + "/peer-id"
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw ResourceFile.error("cannot create \(directory)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            defer { close(descriptor) }
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count >= 0 else { throw ResourceFile.error("cannot read \(path)") }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            let line = text.hasSuffix("\n") ? String(text.dropLast()) : text
            guard line.utf8.count == 16, let id = PeerID(hex: line), id.rawValue != 0 else {
                throw SessionError(.invalidConfiguration, "\(path) does not hold a peer id (16 hex digits)")
            }
            return id
        }
        guard errno == ENOENT else { throw ResourceFile.error("cannot open \(path)") }
        let id = PeerID.random()
        let temporary = path + ".new"
        let output = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw ResourceFile.error("cannot create \(temporary)") }
        let bytes = Array("\(id)\n".utf8)
        let written = bytes.withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
        let synced = fsync(output)
        close(output)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            throw ResourceFile.error("cannot save \(path)")
        }
        return id
    }
}
