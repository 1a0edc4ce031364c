import NIOCore

/// An application added to a session (``Session/addApplication(_:)``), reachable from any thread: each call runs the
/// given body on the session's event loop, one hop, as ``Session``'s own calls do. An application's `Sendable` face
/// keeps one and offers its users their calls through it.
public struct ApplicationHandle<Application: SessionApplication>: Sendable {
    /// The session that carries the application.
    public let session: Session
    private let box: NIOLoopBoundBox<Application>

    init(session: Session, box: NIOLoopBoundBox<Application>) {
        self.session = session
        self.box = box
    }

    /// Runs `body` with the application on the session's loop and returns its result.
    ///
    /// - Throws: ``SessionError/Code/notRunning`` once the session was stopped, or what `body` throws.
    public func call<T: Sendable>(
        _ body: @escaping @Sendable (Application) throws(SessionError) -> T
    ) async throws(SessionError) -> T {
        let box = self.box
        return try await session.onLoopNow { _ throws(SessionError) in try body(box.value) }
    }

    /// Runs `body` with the application on the session's loop and waits for the future it returns.
    public func run<T: Sendable>(
        _ body: @escaping @Sendable (Application) -> EventLoopFuture<T>
    ) async throws(SessionError) -> T {
        let box = self.box
        return try await session.onLoop { _ in body(box.value) }
    }

    /// Runs `body` with the application at once, for a caller that is on the session's loop already (a channel
    /// handler of that loop, say): no hop and no task. Nil when called off the loop, where ``call(_:)`` hops.
    ///
    /// - Throws: ``SessionError/Code/notRunning`` once the session was stopped, or what `body` throws.
    public func callOnLoop<T>(_ body: (Application) throws(SessionError) -> T) throws(SessionError) -> T? {
        guard session.loop.inEventLoop else { return nil }
        guard !session.isStopped else { throw SessionError(.notRunning, "the session was stopped") }
        return try body(box.value)
    }

    /// Runs `body` with the application on the session's loop, without waiting for it.
    public func schedule(_ body: @escaping @Sendable (Application) -> Void) {
        let box = self.box
        session.loop.execute { body(box.value) }
    }
}
