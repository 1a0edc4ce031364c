import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// The application's pings, as a value with a fake clock.
@Suite("RoundTrips")
struct RoundTripsTests {
    let loop = EmbeddedEventLoop()
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)

    @Test("a pong completes its ping with the round trip; nonce 0 and unknown nonces are not the application's")
    func complete() throws {
        var roundTrips = RoundTrips()
        let promise = loop.makePromise(of: TimeAmount.self)
        let nonce = roundTrips.start(to: PeerID(2), at: start, promise: promise)
        #expect(nonce != 0)
        let heartbeat = roundTrips.complete(0, at: start + .microseconds(40))
        let unknown = roundTrips.complete(nonce &+ 1, at: start + .microseconds(40))
        #expect(heartbeat == nil && unknown == nil)
        let answered = roundTrips.complete(nonce, at: start + .microseconds(40))
        let outcome = try #require(answered)
        outcome.complete()
        #expect(try promise.futureResult.wait() == .microseconds(40))
        let again = roundTrips.complete(nonce, at: start + .microseconds(50))
        #expect(again == nil, "once")
    }

    @Test("a ping without a pong fails once 2 s overdue; a stop fails the rest")
    func expire() {
        var roundTrips = RoundTrips()
        let late = loop.makePromise(of: TimeAmount.self)
        let stopped = loop.makePromise(of: TimeAmount.self)
        _ = roundTrips.start(to: PeerID(2), at: start, promise: late)
        _ = roundTrips.start(to: PeerID(2), at: start + .seconds(1), promise: stopped)
        let overdue = roundTrips.expire(now: start + .milliseconds(2_500))
        #expect(overdue.count == 1)
        for outcome in overdue { outcome.complete() }
        #expect(throws: SessionError.self) { try late.futureResult.wait() }
        for outcome in roundTrips.failAll(SessionError(.notRunning, "stopped")) { outcome.complete() }
        #expect(throws: SessionError.self) { try stopped.futureResult.wait() }
    }
}
