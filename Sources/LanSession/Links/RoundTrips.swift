import NIOCore
import WireCodec

/// The pings the application asked for (``Session/ping(_:unreliable:payloadSize:transport:)``), waiting for their
/// pongs. The session's tick fails those overdue: no task per ping. Nonce 0 is the heartbeats' and the probes'.
struct RoundTrips {
    /// How long a ping waits for its pong.
    static let timeout = TimeAmount.seconds(2)

    private struct Pending {
        let promise: EventLoopPromise<TimeAmount>
        let sentAt: NIODeadline
        let peer: PeerID
    }

    private var pending: [UInt32: Pending] = [:]
    private var nextNonce: UInt32 = 1

    /// A ping to `peer` leaves at `now`: its nonce, whose pong completes `promise`.
    mutating func start(to peer: PeerID, at now: NIODeadline, promise: EventLoopPromise<TimeAmount>) -> UInt32 {
        let nonce = nextNonce
        nextNonce &+= 1
        if nextNonce == 0 { nextNonce = 1 }
        pending[nonce] = Pending(promise: promise, sentAt: now, peer: peer)
        return nonce
    }

    /// A pong with `nonce` arrived at `now`: true when it answers a pending ping (completed with its round trip).
    mutating func complete(_ nonce: UInt32, at now: NIODeadline) -> Bool {
        guard nonce != 0, let ping = pending.removeValue(forKey: nonce) else { return false }
        ping.promise.succeed(now - ping.sentAt)
        return true
    }

    /// Fails the pings whose pong is overdue at `now`.
    mutating func expire(now: NIODeadline) {
        guard !pending.isEmpty else { return }
        for (nonce, ping) in pending where now - ping.sentAt > Self.timeout {
            pending[nonce] = nil
            ping.promise.fail(SessionError(.timedOut, "no answer from \(ping.peer) within 2 s"))
        }
    }

    /// Fails every pending ping with `error`.
    mutating func failAll(_ error: SessionError) {
        for ping in pending.values { ping.promise.fail(error) }
        pending = [:]
    }
}
