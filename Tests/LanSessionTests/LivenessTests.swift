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
