import NIOCore
import WireCodec

/// The pings the application asked for (``Session/ping(_:unreliable:payloadSize:transport:)``), waiting for their
/// pongs. The session's tick fails those overdue: no task per ping. Nonce 0 is the heartbeats' and the probes'.
///
/// It hands the promises back instead of completing them: a promise's callbacks run at once, and a series of round
/// trips sends its next ping from there, which must not find this value in the middle of a change.
struct RoundTrips {
    /// A ping's promise and how it ends.
    struct Outcome {
        let promise: EventLoopPromise<TimeAmount>
        let result: Result<TimeAmount, SessionError>

        /// Completes the promise.
        func complete() {
            promise.completeWith(result.mapError { $0 as any Error })
        }
    }

    /// How long a ping waits for its pong.
    static let timeout = TimeAmount.seconds(2)

    private struct Pending {
        let promise: EventLoopPromise<TimeAmount>
        let sentAt: NIODeadline
        let peer: PeerID
    }

    private var pending: [UInt32: Pending] = [:]
    private var nextNonce: UInt32 = 1

    /// Pings waiting for their pongs.
    var waiting: Int { pending.count }

    /// A ping to `peer` leaves at `now`: its nonce, whose pong completes `promise`.
    mutating func start(to peer: PeerID, at now: NIODeadline, promise: EventLoopPromise<TimeAmount>) -> UInt32 {
        let nonce = nextNonce
        nextNonce &+= 1
        if nextNonce == 0 { nextNonce = 1 }
        pending[nonce] = Pending(promise: promise, sentAt: now, peer: peer)
        return nonce
    }

    /// A pong with `nonce` arrived at `now`: the answered ping with its round trip, nil when it answers none.
    mutating func complete(_ nonce: UInt32, at now: NIODeadline) -> Outcome? {
        guard nonce != 0, let ping = pending.removeValue(forKey: nonce) else { return nil }
        return Outcome(promise: ping.promise, result: .success(now - ping.sentAt))
    }

    /// The pings whose pong is overdue at `now`, failed.
    mutating func expire(now: NIODeadline) -> [Outcome] {
        guard !pending.isEmpty else { return [] }
        var overdue: [Outcome] = []
        for (nonce, ping) in pending where now - ping.sentAt > Self.timeout {
            pending[nonce] = nil
            overdue.append(
                Outcome(
                    promise: ping.promise,
                    result: .failure(SessionError(.timedOut, "no answer from \(ping.peer) within 2 s"))))
        }
        return overdue
    }

    /// Every pending ping, failed with `error`.
    mutating func failAll(_ error: SessionError) -> [Outcome] {
        defer { pending = [:] }
        return pending.values.map { Outcome(promise: $0.promise, result: .failure(error)) }
    }
}
