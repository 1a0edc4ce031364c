/// The reply to one request: `{"ok": true, "result": ...}` or `{"ok": false, "error": "..."}`, on one line.
public struct ControlReply<Result: Codable & Sendable>: Codable, Sendable {
    public var ok: Bool
    public var result: Result?
    public var error: String?

    public init(result: Result) {
        self.ok = true
        self.result = result
        self.error = nil
    }

    public init(error: String) {
        self.ok = false
        self.result = nil
        self.error = error
    }
}

/// The reply's status alone, to read before knowing the result's type.
public struct ControlReplyHead: Codable, Sendable {
    public var ok: Bool
    public var error: String?
}
