/// Where the counter makes this peer's own count durable, so that a restarted peer never sends a count below one it
/// sent before, and a failed save never leaves peers counting what the caller was told failed.
public protocol LocalCountStore: Sendable {
    /// Makes `count`, this peer's new count, durable before it is sent. Runs one call at a time, off the event loop
    /// unless ``savesInPlace``; throwing cancels the increment.
    func save(localCount count: UInt64) throws

    /// Whether a save cannot block (the store is in memory, on a tmpfs say): then it runs on the event loop, where
    /// the increment is, instead of on a thread of the pool and back, two thread wake-ups that are most of an
    /// increment's latency. False unless the store says so: a save that waits for a disk must not hold the loop.
    var savesInPlace: Bool { get }
}

extension LocalCountStore {
    public var savesInPlace: Bool { false }
}
