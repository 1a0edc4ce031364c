import NIOCore
import WireCodec

/// The session's pings: the clock they carry (microseconds since the session started), the application's pings
/// waiting for their pongs (``RoundTrips``), and series of them measured one after another.
final class Pings {
    private let loop: any EventLoop
    private let startedAt = NIODeadline.now()
    private var roundTrips = RoundTrips()

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// The entries of its tables, by name (``Session/tableSizes()``).
    var tableSizes: [String: Int] { ["pingsWaiting": roundTrips.waiting] }

    /// Microseconds since the session started, the clock of its pings.
    func micros(_ now: NIODeadline = .now()) -> UInt64 {
        UInt64(max(0, (now - startedAt).nanoseconds / 1000))
    }

    /// The application's ping to `peer` with `payloadSize` bytes of payload, sent at `now`, and the future of its
    /// round trip.
    func start(to peer: PeerID, payloadSize: Int, at now: NIODeadline) -> (Message, EventLoopFuture<TimeAmount>) {
        let promise = loop.makePromise(of: TimeAmount.self)
        let nonce = roundTrips.start(to: peer, at: now, promise: promise)
        let ping = Message.ping(
            Ping(nonce: nonce, timestamp: micros(now), payload: [UInt8](repeating: 0, count: payloadSize)))
        return (ping, promise.futureResult)
    }

    /// A pong with `nonce` arrived: true when it answers the application's ping, which completes now.
    func complete(_ nonce: UInt32, at now: NIODeadline) -> Bool {
        guard let outcome = roundTrips.complete(nonce, at: now) else { return false }
        outcome.complete()  // its callbacks may send the next ping of a series
        return true
    }

    /// Fails the pings whose pong is overdue (from the tick; tests call it with a later `now`).
    func expire(now: NIODeadline) {
        for outcome in roundTrips.expire(now: now) { outcome.complete() }
    }

    /// Fails every ping waiting for its pong.
    func failAll(_ error: SessionError) {
        for outcome in roundTrips.failAll(error) { outcome.complete() }
    }

    /// `count` round trips, each ping sent (by `ping`) from the loop as the previous pong arrives.
    func measure(
        count: Int, _ ping: @escaping () -> EventLoopFuture<TimeAmount>
    ) -> EventLoopFuture<[TimeAmount]> {
        final class Series {
            var samples: [TimeAmount] = []
        }
        let series = Series()
        series.samples.reserveCapacity(count)
        let loop = self.loop
        func step(_ remaining: Int) -> EventLoopFuture<[TimeAmount]> {
            guard remaining > 0 else { return loop.makeSucceededFuture(series.samples) }
            return ping()
                .assumeIsolated()
                .flatMap { roundTrip in
                    series.samples.append(roundTrip)
                    return step(remaining - 1)
                }
                .nonisolated()
        }
        return step(count)
    }
}
