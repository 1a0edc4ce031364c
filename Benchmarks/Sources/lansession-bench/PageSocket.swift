import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A page's WebSocket as a browser opens it (the page's token cookie, its Origin), blocking: frames written masked,
/// and every frame the daemon pushes read and counted on a thread of its own, as a page reads everything.
final class PageSocket: Sendable {
    private let stream: TCPStream
    private let counted = Atomic<Int>(0)
    private let drained = DispatchSemaphore(value: 0)

    /// Frames received so far.
    var received: Int { counted.load(ordering: .relaxed) }

    /// Opens the page at `url` (`http://HOST:PORT/?token=TOKEN`), in the calling thread's network namespace.
    init(url: String) throws {
        guard let parts = URLComponents(string: url), let host = parts.host, let port = parts.port,
            let token = parts.queryItems?.first(where: { $0.name == "token" })?.value
        else { throw BenchFailure("web: not a page address: \(url)") }
        stream = try TCPStream(host: host, port: port, timeout: 5)
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let request = [
            "GET /ws HTTP/1.1", "Host: \(host):\(port)", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: \(key)", "Sec-WebSocket-Version: 13", "Origin: http://\(host):\(port)",
            "Cookie: lansession-page=\(token)",
        ]
        try stream.write(Array((request.joined(separator: "\r\n") + "\r\n\r\n").utf8))
        var head: [UInt8] = []
        while head.firstRange(of: [13, 10, 13, 10]) == nil {
            let chunk = stream.read(limit: 1)  // byte by byte: the frames after the head stay in the socket
            guard !chunk.isEmpty else { throw BenchFailure("web: the page's WebSocket closed during its handshake") }
            head += chunk
        }
        guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw BenchFailure(
                "web: the page's WebSocket was refused: \(String(decoding: head.prefix(60), as: UTF8.self))")
        }
        var none = timeval()
        setsockopt(stream.fd, SOL_SOCKET, SO_RCVTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [self] in
            drain()
            drained.signal()
        }
        thread.start()
    }

    func sendText(_ text: String) throws { try send(opcode: 0x1, Array(text.utf8)) }

    func sendBinary(_ bytes: [UInt8]) throws { try send(opcode: 0x2, bytes) }

    /// Sends a close frame, ends the connection and waits for the reader.
    func close() {
        try? send(opcode: 0x8, [0x03, 0xE8])
        stream.shutdownBoth()
        drained.wait()
    }

    /// One frame, masked as a client's must be (payloads here are short: under 126 bytes).
    private func send(opcode: UInt8, _ payload: [UInt8]) throws {
        precondition(payload.count < 126)
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        var frame: [UInt8] = [0x80 | opcode, 0x80 | UInt8(payload.count)] + mask
        for (index, byte) in payload.enumerated() { frame.append(byte ^ mask[index % 4]) }
        try stream.write(frame)
    }

    /// Reads frames until the connection ends, counting each message (text or binary).
    private func drain() {
        var buffer: [UInt8] = []
        while true {
            let chunk = stream.read()
            if chunk.isEmpty { return }
            buffer += chunk
            while let length = Self.frameLength(buffer), buffer.count >= length {
                if [0x1, 0x2].contains(buffer[0] & 0x0F) { counted.add(1, ordering: .relaxed) }
                buffer.removeFirst(length)
            }
        }
    }

    /// The whole length of the (unmasked) frame at the start of `buffer`, once its header is there.
    private static func frameLength(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 2 else { return nil }
        let short = Int(buffer[1] & 0x7F)
        switch short {
        case 126:
            guard buffer.count >= 4 else { return nil }
            return 4 + (Int(buffer[2]) << 8 | Int(buffer[3]))
        case 127:
            guard buffer.count >= 10 else { return nil }
            return 10 + buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
        default:
            return 2 + short
        }
    }
}
