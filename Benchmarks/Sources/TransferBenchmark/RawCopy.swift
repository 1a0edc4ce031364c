import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The baselines: one TCP connection on 127.0.0.1, the file sent with `sendfile`, received with `read` into a buffer
/// of 1 MiB and written to a file, each side on a thread of its own. Timed from before `connect` to the receiver's
/// last write and `fsync`. With `verify`, both sides also hash what they move with SHA-256, as a resource transfer
/// does: the sender reads the file in blocks of 1 MiB (no `sendfile`), hashes and writes each.
enum RawCopy {
    static func run(source: String, destination: String, size: Int, verify: Bool = false) throws -> Double {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw BenchErrorText("socket: \(String(cString: strerror(errno)))") }
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 1) == 0 else {
            throw BenchErrorText("bind: \(String(cString: strerror(errno)))")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let received = Thread.receiving(listener: listener, destination: destination, verify: verify)
        let start = DispatchTime.now()
        let sender = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(sender) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(sender, $0, length) }
        }
        guard connected == 0 else { throw BenchErrorText("connect: \(String(cString: strerror(errno)))") }
        let file = open(source, O_RDONLY)
        defer { close(file) }
        if verify {
            var hasher = SHA256()
            var block = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = block.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                block.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                var sent = 0
                while sent < count {
                    let result = block.withUnsafeBytes { write(sender, $0.baseAddress! + sent, count - sent) }
                    guard result > 0 else { throw BenchErrorText("write: \(String(cString: strerror(errno)))") }
                    sent += result
                }
            }
            _ = hasher.finalize()
        } else {
            var offset: off_t = 0
            while offset < size {
                let sent = sendfile(sender, file, &offset, size - Int(offset))
                guard sent > 0 else { throw BenchErrorText("sendfile: \(String(cString: strerror(errno)))") }
            }
        }
        shutdown(sender, Int32(SHUT_WR))
        received.wait()
        let end = DispatchTime.now()
        guard received.bytes == size else { throw BenchErrorText("the raw copy received \(received.bytes) bytes") }
        return Double(end.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}

/// The receiving thread of the raw copy.
final class Receiver: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private(set) var bytes = 0

    func wait() { semaphore.wait() }

    fileprivate func receive(listener: Int32, destination: String, verify: Bool) {
        defer { semaphore.signal() }
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        let file = open(destination, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(file) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var hasher = SHA256()
        defer { if verify { _ = hasher.finalize() } }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            if verify {
                buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            }
            var written = 0
            while written < count {
                let result = buffer.withUnsafeBytes { write(file, $0.baseAddress! + written, count - written) }
                if result <= 0 { return }
                written += result
            }
            bytes += count
        }
        fsync(file)
    }
}

extension Thread {
    static func receiving(listener: Int32, destination: String, verify: Bool) -> Receiver {
        let receiver = Receiver()
        let thread = Thread { receiver.receive(listener: listener, destination: destination, verify: verify) }
        thread.start()
        return receiver
    }
}
