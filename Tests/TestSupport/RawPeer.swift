import Foundation
import WireCodec

#if canImport(Glibc)
    import Glibc
#endif

/// A hand-driven TCP peer on loopback: sends whatever bytes a test wants and reads frames back, with timeouts.
public final class RawPeer {
    public let fd: Int32
    private var decoder = StreamDecoder()

    public init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        setTimeout(.seconds(3))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { close(fd) }

    public func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    public func send(_ message: Message) throws {
        send(try StreamFraming.encode(message))
    }

    /// The next message, or nil when the connection closed or nothing came within the timeout.
    public func receive() -> Message? {
        while true {
            if let message = try? decoder.next() { return message }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            decoder.append(contentsOf: chunk[..<count])
        }
    }

    /// The next message, or nil when the connection closed or nothing came within `timeout`.
    public func receive(timeout: Duration) -> Message? {
        setTimeout(timeout)
        defer { setTimeout(.seconds(3)) }
        return receive()
    }

    private func setTimeout(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Whether the other side closed the connection (reads end of stream) within the timeout.
    public func closedByPeer() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }
}
