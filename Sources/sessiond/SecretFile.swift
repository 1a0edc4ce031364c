import Foundation

/// The session's secret, read from a file that only its owner may read.
enum SecretFile {
    /// The secret in `path`: its bytes, less one trailing newline. The file must be a regular file of mode 0600
    /// (or stricter: no bits for group or others) and hold at least one byte.
    static func load(_ path: String) throws(DaemonError) -> [UInt8] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw DaemonError("--secret-file \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw DaemonError("--secret-file \(path): not a regular file")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw DaemonError(
                "--secret-file \(path): mode \(String(info.st_mode & 0o777, radix: 8)) lets others read it; chmod 600 \(path)"
            )
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DaemonError("--secret-file \(path): cannot read it")
        }
        var bytes = [UInt8](data)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw DaemonError("--secret-file \(path): the file is empty") }
        return bytes
    }
}
