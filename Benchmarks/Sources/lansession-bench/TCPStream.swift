import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP connection to an IPv4 address, made in the calling thread's network namespace (see
/// ``NetworkNamespace``): what the WebDriver client and the page's WebSocket ride on.
final class TCPStream: @unchecked Sendable {
    let fd: Int32

    /// Connects to `host` (dotted IPv4) on `port`, giving up reads after `timeout` seconds (0: never).
    init(host: String, port: Int, timeout: Double = 0) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw BenchFailure("not an IPv4 address: \(host)")
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw BenchFailure("cannot connect to \(host):\(port): \(reason)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if timeout > 0 {
            var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    deinit { close(fd) }

    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw BenchFailure("the connection closed while writing") }
            offset += count
        }
    }

    /// Some bytes, at most `limit`; empty at the end of the stream (or on a read timeout).
    func read(limit: Int = 65_536) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit)
        while true {
            let count = recv(fd, &buffer, limit, 0)
            if count < 0 && errno == EINTR { continue }
            return count > 0 ? Array(buffer[..<count]) : []
        }
    }

    /// Ends both directions (a blocked reader wakes up).
    func shutdownBoth() { shutdown(fd, Int32(SHUT_RDWR)) }
}
