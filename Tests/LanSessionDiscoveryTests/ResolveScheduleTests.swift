import Testing
import WireCodec

@testable import LanSessionDiscovery

@Suite("ResolveSchedule")
struct ResolveScheduleTests {
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// The schedule with advertisements of peers 1...count sighted at the start.
    func sighted(_ count: Int) -> ResolveSchedule {
        var schedule = ResolveSchedule(now: start)
        for id in 1...count {
            schedule.sighted("p\(id)", peer: PeerID(UInt64(id)), interfaces: 1, now: start)
        }
        return schedule
    }

    @Test("peers nothing tells about: a burst at once, then one per refill, oldest first")
    func burstThenRefill() {
        var schedule = sighted(6)
        #expect(schedule.due(now: at(0)) { _ in .unknown } == ["p1", "p2", "p3"])
        #expect(schedule.due(now: at(100)) { _ in .unknown } == [])
        #expect(schedule.due(now: at(250)) { _ in .unknown } == ["p4"])
        #expect(schedule.due(now: at(1_000)) { _ in .unknown } == ["p5", "p6"])
        #expect(schedule.waiting.isEmpty)
        // The budget does not grow past the burst while idle.
        schedule.sighted("q1", peer: PeerID(11), interfaces: 1, now: at(60_000))
        schedule.sighted("q2", peer: PeerID(12), interfaces: 1, now: at(60_000))
        schedule.sighted("q3", peer: PeerID(13), interfaces: 1, now: at(60_000))
        schedule.sighted("q4", peer: PeerID(14), interfaces: 1, now: at(60_000))
        #expect(schedule.due(now: at(60_000)) { _ in .unknown } == ["q1", "q2", "q3"])
    }

    @Test("a connected peer is not resolved while it stays connected; once it is not, it is")
    func connectedWaits() {
        var schedule = sighted(2)
        let connected: Set<PeerID> = [PeerID(1), PeerID(2)]
        for step in 0..<40 {
            #expect(schedule.due(now: at(step * 250)) { connected.contains($0) ? .connected : .unknown } == [])
        }
        #expect(schedule.waitingPeers == connected)
        #expect(schedule.due(now: at(10_000)) { $0 == PeerID(1) ? .connected : .unknown } == ["p2"])
    }

    @Test("the next check: when a token is back, when a grace ends, never for a peer that stays connected")
    func nextCheck() {
        var schedule = sighted(5)
        #expect(schedule.due(now: at(0)) { _ in .unknown } == ["p1", "p2", "p3"])
        #expect(schedule.nextCheck == at(250), "the next token")
        // p4 connected, p5 known: nothing is due until p5's grace ends.
        let reach: (PeerID) -> ResolveSchedule.Reach = { $0 == PeerID(4) ? .connected : .known }
        #expect(schedule.due(now: at(300), reach: reach) == [])
        #expect(schedule.nextCheck == at(2_300))
        #expect(schedule.due(now: at(2_300), reach: reach) == ["p5"])
        #expect(schedule.nextCheck == nil, "a connected peer waits for a change of its state, not for a time")
        // A connected peer sighted on two interfaces: after the path grace.
        schedule.sighted("p6", peer: PeerID(6), interfaces: 2, now: at(2_400))
        let connected: (PeerID) -> ResolveSchedule.Reach = { _ in .connected }
        #expect(schedule.due(now: at(2_400), reach: connected) == [])
        #expect(schedule.nextCheck == at(3_400))
        schedule.removed("p4")
        #expect(schedule.due(now: at(3_400), reach: connected) == ["p6"])
        #expect(schedule.nextCheck == nil, "nothing waits")
    }

    @Test("a peer known from members but not connected is resolved after the grace")
    func knownGrace() {
        var schedule = sighted(1)
        #expect(schedule.due(now: at(0)) { _ in .known } == [])
        #expect(schedule.due(now: at(1_900)) { _ in .known } == [])
        // Connected in between: the grace starts again when it is known and not connected anew.
        #expect(schedule.due(now: at(1_950)) { _ in .connected } == [])
        #expect(schedule.due(now: at(3_000)) { _ in .known } == [])
        #expect(schedule.due(now: at(4_999)) { _ in .known } == [])
        #expect(schedule.due(now: at(5_000)) { _ in .known } == ["p1"])
    }

    @Test("a connected peer sighted on two interfaces is resolved after the path grace, to find its other path")
    func secondInterface() {
        var schedule = sighted(1)
        #expect(schedule.due(now: at(500)) { _ in .connected } == [])
        schedule.sighted("p1", peer: PeerID(1), interfaces: 2, now: at(600))
        #expect(schedule.due(now: at(900)) { _ in .connected } == [])
        #expect(schedule.due(now: at(1_000)) { _ in .connected } == ["p1"])
    }

    @Test("a name that names no peer is resolved at once, outside the budget; a withdrawn one is dropped")
    func foreignAndRemoved() {
        var schedule = sighted(4)
        schedule.sighted("theirs", peer: nil, interfaces: 1, now: start)
        schedule.removed("p2")
        #expect(schedule.due(now: at(0)) { _ in .unknown } == ["p1", "p3", "p4", "theirs"])
        schedule.sighted("other", peer: nil, interfaces: 1, now: at(1))
        #expect(schedule.due(now: at(1)) { _ in .unknown } == ["other"])
    }
}
