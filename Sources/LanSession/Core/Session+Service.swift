import ServiceLifecycle

extension Session: Service {
    /// Starts the session (unless ``start()`` was called already), runs until graceful shutdown (or cancellation),
    /// then says bye to every peer and stops.
    ///
    /// For a `ServiceGroup`, as Hummingbird's `Server`: the group's graceful shutdown ends the session cleanly.
    public func run() async throws {
        try await startIfNeeded()
        try? await gracefulShutdown()
        await stop()
    }
}
