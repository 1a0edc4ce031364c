import NIOCore

/// The original apps (a counter, three bubbles, player indexes), an application the session carries; see
/// `BubblesAndCounter`.
extension Session {
    /// The replicated counter, with every increment this peer made so far.
    public func counter() async throws(SessionError) -> GCounter {
        try await application { application in
            application.foldLocalIncrements()
            return application.counter
        }
    }

    /// The bubbles.
    public func bubbles() async throws(SessionError) -> BubbleBoard {
        try await application { $0.bubbles }
    }

    /// Player indexes of the current members.
    public func layout() async throws(SessionError) -> PlayerLayout {
        try await application { $0.layout }
    }

    /// Adds `count` presses by this peer and returns this peer's count; every member gets it reliably.
    ///
    /// With the configuration's ``SessionConfiguration/localCountStore``, the new count is durable before it is sent
    /// and before this returns; when the save fails, nothing was sent and the count is unchanged. Without one, the
    /// count grows at once on the caller's thread (no hop to the session's loop) and leaves at the end of the loop's
    /// turn: the increments of many callers in one turn go out as one message, since the count on the wire is
    /// absolute.
    @discardableResult
    public func increment(by count: UInt64 = 1) async throws(SessionError) -> UInt64 {
        if let store = configuration.localCountStore {
            return try await application { $0.increment(by: count, savingTo: store) }
        }
        guard count > 0 else { throw SessionError(.invalidArgument, "an increment counts at least 1") }
        guard !isStopped else { throw SessionError(.notRunning, "the session was stopped") }
        guard let total = localIncrements.add(count) else {
            throw SessionError(.invalidArgument, "the count would pass \(UInt64.max)")
        }
        if localIncrements.claimFold() { scheduleOnApplication { $0.foldLocalIncrements() } }
        return total
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
