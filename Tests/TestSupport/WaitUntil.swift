/// Polls `condition` every `interval` until it holds; false when it still does not after `timeout`.
///
/// For what a test cannot be told about (a daemon's state over its control socket, a peer on the other side of a
/// socket); where an event says it, wait for the event instead.
public func waitUntil(
    _ timeout: Duration = .seconds(5), every interval: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
