import NIOCore
import Testing
import WireCodec

@testable import LanSession

/// Liveness driven by a fake clock: explicit deadlines, no sleeps.
@Suite("Liveness")
struct LivenessTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test("a quiet link sends heartbeats and a silent one dies at the timeout")
    func verdicts() {
        var liveness = Liveness(heartbeatInterval: .milliseconds(500), timeout: .seconds(2), now: start)
        #expect(liveness.check(at: start + .milliseconds(100)) == .alive)
        #expect(liveness.check(at: start + .milliseconds(500)) == .heartbeatDue)
        liveness.didSend(at: start + .milliseconds(500))
        #expect(liveness.check(at: start + .milliseconds(900)) == .alive)
        #expect(liveness.check(at: start + .milliseconds(1_999)) == .heartbeatDue)
        #expect(liveness.check(at: start + .seconds(2)) == .dead)
    }

    @Test("anything received keeps the link alive")
    func receiving() {
        var liveness = Liveness(heartbeatInterval: .milliseconds(500), timeout: .seconds(2), now: start)
        for step in 1...20 {
            let now = start + .milliseconds(Int64(step) * 400)
            liveness.didReceive(at: now)
            liveness.didSend(at: now)
            #expect(liveness.check(at: now + .milliseconds(100)) == .alive)
        }
        // A late, out-of-order timestamp does not move time back.
        liveness.didReceive(at: start)
        #expect(liveness.check(at: start + .milliseconds(8_100)) == .alive)
    }
}

@Suite("RoundTripEstimator")
struct RoundTripEstimatorTests {
    @Test("smooths samples the way TCP does")
    func smoothing() {
        var estimator = RoundTripEstimator()
        #expect(estimator.smoothed == nil)
        estimator.add(.microseconds(800))
        #expect(estimator.smoothed == .microseconds(800))
        for _ in 0..<50 { estimator.add(.microseconds(100)) }
        #expect(estimator.last == .microseconds(100))
        #expect(estimator.smoothed! < .microseconds(110))
        #expect(estimator.samples == 51)
        estimator.add(.microseconds(-5))
        #expect(estimator.last == .zero)
    }
}

@Suite("LinkArbiter")
struct LinkArbiterTests {
    @Test("both sides keep the link dialled by the lower peer id")
    func differentDialers() {
        let low = PeerIDs.low
        let high = PeerIDs.high
        // On the low side: its own link (dialled by low) against the high peer's.
        #expect(LinkArbiter.keepsNewLink(local: low, peer: high, newDialer: low, oldDialer: high))
        #expect(!LinkArbiter.keepsNewLink(local: low, peer: high, newDialer: high, oldDialer: low))
        // On the high side, the same links, the same verdicts.
        #expect(LinkArbiter.keepsNewLink(local: high, peer: low, newDialer: low, oldDialer: high))
        #expect(!LinkArbiter.keepsNewLink(local: high, peer: low, newDialer: high, oldDialer: low))
    }

    @Test("a redial by the same dialer replaces the older link")
    func sameDialer() {
        #expect(
            LinkArbiter.keepsNewLink(
                local: PeerIDs.low, peer: PeerIDs.high, newDialer: PeerIDs.high, oldDialer: PeerIDs.high))
        #expect(
            LinkArbiter.keepsNewLink(
                local: PeerIDs.high, peer: PeerIDs.low, newDialer: PeerIDs.high, oldDialer: PeerIDs.high))
    }
}

enum PeerIDs {
    static let low = PeerID(5)
    static let high = PeerID(9)
}
