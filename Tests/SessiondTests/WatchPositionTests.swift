import Foundation
import SessionControl
import Testing

/// Where a watcher stands: what it asks for when it connects again, across gaps and restarts of the daemon.
@Suite("WatchPosition")
struct WatchPositionTests {
    static func event(_ seq: UInt64) -> Data { Data(#"{"event":"peerLost","seq":\#(seq),"peerID":"p"}"#.utf8) }
    static let missed = Data(#"{"event":"eventsMissed","count":3}"#.utf8)

    @Test("from now on: a plain watch, then after the reply's last number, then after each event taken")
    func fromNow() {
        var position = WatchPosition()
        #expect(position.request == .watch())
        position.subscribed(WatchResult(run: "r1", seq: 40))
        #expect(position.request == .watch(since: 40, run: "r1"))
        #expect(position.took(Self.event(41)) == 0)
        #expect(position.took(Self.missed) == 0, "no number: the line says its count itself")
        #expect(position.took(Self.event(45)) == 3, "42, 43 and 44 skipped")
        #expect(position.request == .watch(since: 45, run: "r1"))
    }

    @Test("with since: kept through the reply of its run, or of no run given")
    func since() {
        var position = WatchPosition(since: 7)
        #expect(position.request == .watch(since: 7))
        position.subscribed(WatchResult(run: "r1", seq: 9))
        #expect(position.request == .watch(since: 7, run: "r1"), "8 and 9 come as the replay")
        var known = WatchPosition(run: "r1", since: 7)
        known.subscribed(WatchResult(run: "r1", seq: 9))
        #expect(known.request == .watch(since: 7, run: "r1"))
    }

    @Test("a reply of another run (the daemon restarted): the next connection asks from that run's first event")
    func restarted() {
        var position = WatchPosition(run: "r1", since: 500)
        position.subscribed(WatchResult(run: "r2", seq: 0))
        #expect(position.request == .watch(since: 0, run: "r2"), "not 500 of the new run")
        #expect(position.took(Self.event(1)) == 0)
        #expect(position.request == .watch(since: 1, run: "r2"))
    }
}
