import Foundation
import LanSession

/// The secret a browser shows to see the page: 32 random bytes as hex, in `web-token` (mode 0600) in the state
/// directory, made on first use and kept, so that a bookmarked address keeps working across restarts (as Jupyter's
/// token does). The page's address carries it once (`/?token=…`); the answer sets it as an HttpOnly cookie, which the
/// page's files and its WebSocket then carry.
struct PageToken: Sendable, Equatable {
    /// The cookie that carries it.
    static let cookieName = "lansession-page"

    let value: String

    /// The token in `directory`, made there if missing.
    static func load(in directory: String) throws(DaemonError) -> PageToken {
        let path = directory + "/web-token"
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard value.count == 64, value.allSatisfy(\.isHexDigit) else {
                throw DaemonError("\(path) is not a page token (64 hex digits); remove it to make a new one")
            }
            return PageToken(value: value)
        }
        var generator = SystemRandomNumberGenerator()
        let value = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        do {
            try AtomicFile.write(Array((value + "\n").utf8), to: path)
        } catch {
            throw DaemonError("cannot save the page token: \(error.message)")
        }
        return PageToken(value: value)
    }

    /// Whether `candidate` is this token, compared in constant time.
    func matches(_ candidate: Substring?) -> Bool {
        guard let candidate else { return false }
        let a = Array(value.utf8)
        let b = Array(candidate.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// The `token` parameter of a request target's query (`/path?token=…&…`).
    static func fromQuery(of target: String) -> Substring? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == "token" { return parts[1] }
        }
        return nil
    }

    /// This token's cookie among the `Cookie` header values.
    static func fromCookies(_ headers: [String]) -> Substring? {
        for header in headers {
            for item in header.split(separator: ";") {
                let parts = item.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == cookieName { return parts[1] }
            }
        }
        return nil
    }

    /// The `Set-Cookie` value that hands it to the browser: not readable by scripts, sent to this origin only.
    var setCookie: String { "\(Self.cookieName)=\(value); Path=/; HttpOnly; SameSite=Strict" }
}
