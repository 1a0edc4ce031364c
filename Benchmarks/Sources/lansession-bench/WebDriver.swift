import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A headless Chromium through chromedriver's W3C WebDriver protocol (JSON over HTTP on 127.0.0.1): a session, its
/// page, scripts run in it, and real pointer input (WebDriver actions). Call it from a thread in the network namespace
/// where chromedriver listens.
final class WebDriver {
    private let port: Int
    private let session: String

    /// The key of an element reference in WebDriver's JSON.
    private static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    /// Waits (at most 10 s) until chromedriver on `port` is ready for a session.
    static func waitForDriver(port: Int) throws {
        let ready = Polling.until(200, every: 0.05) {
            guard let (status, body) = try? LoopbackHTTP.request(port: port, "GET", "/status"), status == 200,
                let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
                let value = object["value"] as? [String: Any]
            else { return false }
            return value["ready"] as? Bool ?? false
        }
        guard ready else { throw BenchFailure("web: chromedriver did not answer on port \(port)") }
    }

    /// Opens a browser: headless Chromium with `arguments` besides the usual ones.
    init(port: Int, arguments: [String] = []) throws {
        self.port = port
        let options: [String: Any] = [
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
                "--force-device-scale-factor=1", "--disable-dev-shm-usage",
            ] + arguments
        ]
        let capabilities: [String: Any] = [
            "capabilities": ["alwaysMatch": ["browserName": "chrome", "goog:chromeOptions": options]]
        ]
        let value = try Self.call(port: port, "POST", "/session", capabilities)
        guard let object = value as? [String: Any], let session = object["sessionId"] as? String else {
            throw BenchFailure("web: chromedriver gave no session: \(value)")
        }
        self.session = session
    }

    /// Closes the browser.
    func quit() {
        _ = try? Self.call(port: port, "DELETE", "/session/\(session)", nil)
    }

    /// Opens `url`.
    func open(_ url: String) throws {
        _ = try command("POST", "url", ["url": url])
    }

    /// Runs `script` (a function body) in the page and returns its value.
    @discardableResult
    func execute(_ script: String) throws -> Any {
        try command("POST", "execute/sync", ["script": script, "args": [Any]()])
    }

    /// The value `script` returns, decoded as `type` (through JSON).
    func execute<Value: Decodable>(_ script: String, as type: Value.Type) throws -> Value {
        let value = try execute(script)
        let data = try JSONSerialization.data(withJSONObject: ["value": value])
        return try JSONDecoder().decode(Wrapped<Value>.self, from: data).value
    }

    /// The first element that `selector` (CSS) matches, as WebDriver names it.
    func element(_ selector: String) throws -> [String: String] {
        let value = try command("POST", "element", ["using": "css selector", "value": selector])
        guard let object = value as? [String: Any], let id = object[Self.elementKey] as? String else {
            throw BenchFailure("web: no element \(selector)")
        }
        return [Self.elementKey: id]
    }

    /// A mouse drag as a person makes it: press on `element`'s centre, `steps` moves by (dx, dy) in all, each taking
    /// 16 ms (a frame), then (with `release`) let go.
    func drag(_ element: [String: String], dx: Int, dy: Int, steps: Int, release: Bool = true) throws {
        var actions: [[String: Any]] = [
            ["type": "pointerMove", "duration": 16, "x": 0, "y": 0, "origin": element],
            ["type": "pointerDown", "button": 0],
        ]
        for _ in 0..<steps {
            actions.append([
                "type": "pointerMove", "duration": 16, "x": dx / steps, "y": dy / steps, "origin": "pointer",
            ])
        }
        if release { actions.append(["type": "pointerUp", "button": 0]) }
        let pointer: [String: Any] = [
            "type": "pointer", "id": "mouse", "parameters": ["pointerType": "mouse"], "actions": actions,
        ]
        _ = try command("POST", "actions", ["actions": [pointer]])
    }

    private func command(_ method: String, _ path: String, _ body: [String: Any]) throws -> Any {
        try Self.call(port: port, method, "/session/\(session)/\(path)", body)
    }

    /// One WebDriver call: its `value`, or its error as a failure.
    private static func call(port: Int, _ method: String, _ path: String, _ body: [String: Any]?) throws -> Any {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let (status, reply) = try LoopbackHTTP.request(port: port, method, path, body: data)
        let object = (try? JSONSerialization.jsonObject(with: reply)) as? [String: Any]
        guard status == 200, let object else {
            let value = object?["value"] as? [String: Any]
            let message = (value?["message"] as? String).map { String($0.prefix(300)) } ?? "status \(status)"
            throw BenchFailure("web: WebDriver \(method) \(path): \(message)")
        }
        return object["value"] ?? NSNull()
    }

    private struct Wrapped<Value: Decodable>: Decodable {
        var value: Value
    }
}
