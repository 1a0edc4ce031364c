import NIOCore
import Testing
import WireCodec

@testable import LanSession

@Suite("PathSelector")
struct PathSelectorTests {
    let selector = PathSelector(priority: ["lan", "rfcomm"], silence: .milliseconds(750), hysteresis: .seconds(3))
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)

    final class Token {}
    let lan = Token()
    let lan2 = Token()
    let bt = Token()

    func candidate(
        _ token: Token, _ transport: String, rtt: Int?, up: TimeAmount, silent: TimeAmount = .zero,
        at now: NIODeadline
    ) -> PathSelector.Candidate {
        PathSelector.Candidate(
            id: ObjectIdentifier(token), transport: transport, rtt: rtt.map { .microseconds(Int64($0)) },
            readySince: now - up, lastReceived: now - silent)
    }

    @Test("without an active link the best healthy one is activated: preferred transport, then round trip")
    func firstChoice() {
        let now = start
        let candidates = [
            candidate(bt, "rfcomm", rtt: 900, up: .seconds(10), at: now),
            candidate(lan, "lan", rtt: 300, up: .zero, at: now),
            candidate(lan2, "lan", rtt: 200, up: .zero, at: now),
        ]
        #expect(selector.decide(active: nil, candidates: candidates, now: now) == .activate(ObjectIdentifier(lan2)))
        #expect(selector.decide(active: nil, candidates: [], now: now) == .keep)
    }

    @Test("a silent active link hands over at once; a healthy one keeps its traffic")
    func silence() {
        let now = start
        var candidates = [
            candidate(lan, "lan", rtt: 300, up: .seconds(60), silent: .milliseconds(800), at: now),
            candidate(bt, "rfcomm", rtt: 1_500, up: .seconds(60), at: now),
        ]
        #expect(
            selector.decide(active: ObjectIdentifier(lan), candidates: candidates, now: now)
                == .activate(ObjectIdentifier(bt)))
        candidates[0] = candidate(lan, "lan", rtt: 300, up: .seconds(60), silent: .milliseconds(700), at: now)
        #expect(selector.decide(active: ObjectIdentifier(lan), candidates: candidates, now: now) == .keep)
        // Nothing healthy at all: wait.
        let allSilent = [candidate(bt, "rfcomm", rtt: 1, up: .seconds(60), silent: .seconds(1), at: now)]
        #expect(selector.decide(active: ObjectIdentifier(lan), candidates: allSilent, now: now) == .keep)
    }

    @Test("a better path that came back takes the traffic only after the hysteresis")
    func hysteresis() {
        let now = start
        let justBack = [
            candidate(bt, "rfcomm", rtt: 1_500, up: .seconds(60), at: now),
            candidate(lan, "lan", rtt: 300, up: .seconds(2), at: now),
        ]
        #expect(selector.decide(active: ObjectIdentifier(bt), candidates: justBack, now: now) == .keep)
        let proved = [
            candidate(bt, "rfcomm", rtt: 1_500, up: .seconds(60), at: now),
            candidate(lan, "lan", rtt: 300, up: .seconds(3), at: now),
        ]
        #expect(
            selector.decide(active: ObjectIdentifier(bt), candidates: proved, now: now)
                == .activate(ObjectIdentifier(lan)))
    }

    @Test("two paths of one transport do not take turns: only a round trip under half moves the traffic")
    func noFlapping() {
        let now = start
        let similar = [
            candidate(lan, "lan", rtt: 300, up: .seconds(60), at: now),
            candidate(lan2, "lan", rtt: 200, up: .seconds(60), at: now),
        ]
        #expect(selector.decide(active: ObjectIdentifier(lan), candidates: similar, now: now) == .keep)
        let muchFaster = [
            candidate(lan, "lan", rtt: 300, up: .seconds(60), at: now),
            candidate(lan2, "lan", rtt: 100, up: .seconds(60), at: now),
        ]
        #expect(
            selector.decide(active: ObjectIdentifier(lan), candidates: muchFaster, now: now)
                == .activate(ObjectIdentifier(lan2)))
    }
}
