import NIOCore

/// The original apps (a counter, three bubbles, player indexes), an application the session carries; see
/// `BubblesAndCounter`.
extension Session {
    /// The replicated counter.
    public func counter() async throws(SessionError) -> GCounter {
        try await application { $0.counter }
    }

    /// The bubbles.
    public func bubbles() async throws(SessionError) -> BubbleBoard {
        try await application { $0.bubbles }
    }

    /// Player indexes of the current members.
    public func layout() async throws(SessionError) -> PlayerLayout {
        try await application { $0.layout }
    }

    /// Adds `count` presses by this peer: makes the new count durable (with the configuration's
    /// ``SessionConfiguration/localCountStore``), then sends it reliably to every member. Returns this peer's count
    /// once both are done; when the save fails, nothing was sent and the count is unchanged.
    @discardableResult
    public func increment(by count: UInt64 = 1) async throws(SessionError) -> UInt64 {
        // Without a store nothing waits: one hop, no future. With one, still one hop (the save is waited for).
        guard configuration.localCountStore == nil else { return try await application { $0.increment(by: count) } }
        return try await application { application throws(SessionError) in try application.incrementInMemory(by: count)
        }
    }

    /// Asks for bubble `view`; the coordinator's answer arrives as a ``SessionEvent/holder(view:holder:)`` event.
    public func pickUp(_ view: UInt8) async throws(SessionError) {
        try await application { application throws(SessionError) in try application.pickUp(view) }
    }

    /// Moves bubble `view`, which this peer must hold.
    public func move(_ view: UInt8, x: Float, y: Float) async throws(SessionError) {
        try await application { application throws(SessionError) in try application.move(view, x: x, y: y) }
    }

    /// Drops bubble `view`, which this peer must hold, at its final position.
    public func drop(_ view: UInt8, x: Float, y: Float) async throws(SessionError) {
        try await application { application throws(SessionError) in try application.drop(view, x: x, y: y) }
    }
}
