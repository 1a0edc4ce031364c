/// Where the counter makes this peer's own count durable, so that a restarted peer never sends a count below one it
/// sent before, and a failed save never leaves peers counting what the caller was told failed.
public protocol LocalCountStore: Sendable {
    /// Makes `count`, this peer's new count, durable before it is sent. Runs off the event loop, one call at a time;
    /// throwing cancels the increment.
    func save(localCount count: UInt64) throws
}
