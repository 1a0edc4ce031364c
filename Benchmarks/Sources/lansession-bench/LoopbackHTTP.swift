import Foundation

/// One HTTP/1.1 request to a server on 127.0.0.1 (chromedriver's WebDriver endpoint), on a connection of its own
/// that the server closes after the response.
enum LoopbackHTTP {
    /// Sends the request and returns the status and the body (JSON, for WebDriver).
    static func request(port: Int, _ method: String, _ path: String, body: Data? = nil) throws -> (Int, Data) {
        let stream = try TCPStream(host: "127.0.0.1", port: port, timeout: 120)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let body { head += "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\n" }
        try stream.write(Array((head + "\r\n").utf8) + Array(body ?? Data()))
        // To the end of the body: Content-Length's bytes when the head gives it (chromedriver keeps the connection
        // open), else to the end of the stream.
        let separator: [UInt8] = [13, 10, 13, 10]
        var response: [UInt8] = []
        var expected: Int?
        while expected.map({ response.count < $0 }) ?? true {
            let chunk = stream.read()
            if chunk.isEmpty { break }
            response += chunk
            if expected == nil, let end = response.firstRange(of: separator) {
                let head = String(decoding: response[..<end.lowerBound], as: UTF8.self).lowercased()
                if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                    let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
                {
                    expected = end.upperBound + length
                }
            }
        }
        guard let end = response.firstRange(of: separator) else {
            throw BenchFailure("no HTTP response from 127.0.0.1:\(port)\(path)")
        }
        let headers = String(decoding: response[..<end.lowerBound], as: UTF8.self)
        let status = Int(headers.split(separator: " ").dropFirst().first ?? "") ?? 0
        var payload = Array(response[end.upperBound...])
        if headers.lowercased().contains("transfer-encoding: chunked") { payload = dechunk(payload) }
        return (status, Data(payload))
    }

    /// A chunked body put together.
    private static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var index = 0
        while let lineEnd = bytes[index...].firstRange(of: [13, 10]) {
            let size = Int(String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self), radix: 16) ?? 0
            guard size > 0, lineEnd.upperBound + size <= bytes.count else { break }
            result += bytes[lineEnd.upperBound..<(lineEnd.upperBound + size)]
            index = lineEnd.upperBound + size + 2
            guard index < bytes.count else { break }
        }
        return result
    }
}
