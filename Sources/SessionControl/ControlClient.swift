import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking client of the control socket: one request, one reply line; or a stream of event lines.
public final class ControlClient {
    /// Why talking to the daemon failed.
    public struct Failure: Error, CustomStringConvertible {
        /// The daemon could not be reached at all (not running, or no permission).
        public var unreachable: Bool
        /// The daemon answered with an error reply; `description` is its message.
        public var refused = false
        public var description: String
    }

    /// The socket path in use.
    public let path: String
    private let fd: Int32
    private var buffer = Data()

    /// Connects to the daemon's socket.
    public init(path: String) throws(Failure) {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else {
            throw Failure(unreachable: true, description: "socket(): \(String(cString: strerror(errno)))")
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            close(fd)
            throw Failure(unreachable: true, description: "control socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(
                unreachable: true, description: "sessiond is not running? cannot connect to \(path): \(reason)")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends a request and decodes its reply's result.
    public func call<Result: Decodable>(_ request: ControlCommand, as type: Result.Type) throws(Failure) -> Result {
        let line = try reply(to: request)
        do {
            return try JSONDecoder().decode(ControlReplyBody<Result>.self, from: line).result
        } catch {
            throw Failure(unreachable: false, description: "unexpected reply from sessiond: \(error)")
        }
    }

    /// Sends a request and returns its reply line when it succeeded; an error reply throws the daemon's message.
    public func reply(to request: ControlCommand) throws(Failure) -> Data {
        try send(request)
        return try Self.checked(try readLine())
    }

    /// A reply line when it succeeded (`"ok": true`); an error reply throws the daemon's message (`refused`).
    public static func checked(_ line: Data) throws(Failure) -> Data {
        let head: ControlReplyHead
        do {
            head = try JSONDecoder().decode(ControlReplyHead.self, from: line)
        } catch {
            let text = String(decoding: line, as: UTF8.self)
            throw Failure(unreachable: false, description: "unreadable reply from sessiond: \(text)")
        }
        guard head.ok else {
            throw Failure(unreachable: false, refused: true, description: head.error ?? "sessiond refused the request")
        }
        return line
    }

    /// Sends a request and returns its reply line as it came (for `--json` output).
    public func callRaw(_ request: ControlCommand) throws(Failure) -> Data {
        try send(request)
        return try readLine()
    }

    /// Sends one request line.
    public func send(_ request: ControlCommand) throws(Failure) {
        let data: Data
        do {
            data = try JSONEncoder().encode(request) + Data("\n".utf8)
        } catch {
            throw Failure(unreachable: false, description: "cannot encode request: \(error)")
        }
        try write(data)
    }

    /// Writes raw bytes (for tests of the daemon's error handling).
    public func write(_ data: Data) throws(Failure) {
        let written = data.withUnsafeBytes { raw -> Int in
            var offset = 0
            while offset < raw.count {
                let count = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if count <= 0 { return -1 }
                offset += count
            }
            return offset
        }
        guard written >= 0 else {
            throw Failure(unreachable: false, description: "sessiond closed the connection")
        }
    }

    /// Reads one line (without its newline); throws at end of stream.
    public func readLine() throws(Failure) -> Data {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                return Data(line)
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw Failure(unreachable: false, description: "sessiond closed the connection")
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Gives up on reads after `seconds` (0: never).
    public func setReadTimeout(seconds: Double) {
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}

/// A successful reply's body.
struct ControlReplyBody<Result: Decodable>: Decodable {
    var result: Result
}
