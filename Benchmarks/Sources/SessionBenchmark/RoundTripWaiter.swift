import NIOCore

/// The one round trip a raw client is waiting for, with the same 2 s timeout as `Session.ping`.
///
/// Lives on the client's event loop and is only touched there. Like `Session.ping`, every round trip makes a
/// promise and schedules (then cancels) a timeout task, so that this bookkeeping costs the baselines what it costs
/// the sessions.
final class RoundTripWaiter {
    /// How long a round trip may take before it fails.
    static let timeout = TimeAmount.seconds(2)

    private let loop: any EventLoop
    private let what: String
    private var promise: EventLoopPromise<Void>?
    private var timeoutTask: Scheduled<Void>?

    /// Creates a waiter on `loop`; `what` names the round trips in errors.
    init(loop: any EventLoop, what: String) {
        self.loop = loop
        self.what = what
    }

    /// Starts waiting for an answer: the future succeeds on ``answered()`` and fails after ``timeout``.
    ///
    /// One round trip at a time: callers check ``isWaiting`` first.
    func begin() -> EventLoopFuture<Void> {
        loop.preconditionInEventLoop()
        precondition(promise == nil, "\(what): a round trip is already under way")
        let promise = loop.makePromise(of: Void.self)
        self.promise = promise
        let what = self.what
        timeoutTask = loop.assumeIsolated().scheduleTask(in: Self.timeout) { [self] in
            fail(BenchError("\(what): no answer within \(Self.timeout.nanoseconds / 1_000_000_000) s"))
        }
        return promise.futureResult
    }

    /// Whether a round trip is under way.
    var isWaiting: Bool { promise != nil }

    /// The answer arrived: the round trip succeeds.
    func answered() {
        timeoutTask?.cancel()
        timeoutTask = nil
        let promise = self.promise
        self.promise = nil
        promise?.succeed()
    }

    /// The round trip under way, if any, fails with `error`.
    func fail(_ error: any Error) {
        timeoutTask?.cancel()
        timeoutTask = nil
        let promise = self.promise
        self.promise = nil
        promise?.fail(error)
    }
}
