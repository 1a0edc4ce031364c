import NIOCore
import Synchronization
import Testing

@testable import LanSession

/// Observers of an `EventFanout`: every event at once, on the yielding thread, beside its buffered subscribers.
@Suite("EventFanout observers")
struct EventFanoutTests {
    /// What an observer was called with, and whether it was told the events ended.
    final class Observed: Sendable {
        let events = Mutex<[SessionEvent]>([])
        let finished = Atomic(0)

        func take(_ event: SessionEvent) { events.withLock { $0.append(event) } }
        var all: [SessionEvent] { events.withLock { $0 } }
    }

    /// An observation, kept for the observer itself.
    final class Slot: Sendable {
        let observation = Mutex<EventObservation?>(nil)
    }

    static func fanout() -> EventFanout<SessionEvent> {
        EventFanout(missed: SessionEvent.eventsMissed, split: SessionEvent.split)
    }

    @Test("an observer sees every event before yield returns, in order, however far a subscriber falls behind")
    func everyEventAtOnce() {
        let fanout = Self.fanout()
        let slow = fanout.subscribe(bufferSize: 2)
        let observed = Observed()
        fanout.observe({ observed.take($0) }, finished: { observed.finished.add(1, ordering: .relaxed) })
        for index in 0..<100 {
            fanout.yield(.peerLost(PeerID(UInt64(index))))
            #expect(observed.all.count == index + 1)
        }
        #expect(observed.all == (0..<100).map { .peerLost(PeerID(UInt64($0))) })
        #expect(!observed.all.contains(.eventsMissed(98)), "nothing is missed by an observer")
        _ = slow
    }

    @Test("a splitting observer takes a batch's messages one by one; another the batch whole")
    func splitting() {
        let fanout = Self.fanout()
        let each = Observed()
        let whole = Observed()
        fanout.observe(splitting: true) { each.take($0) }
        fanout.observe(splitting: false) { whole.take($0) }
        let batch = ReceivedMessages(
            from: PeerID(7), reliable: true, messages: [ByteBuffer(bytes: [1]), ByteBuffer(bytes: [2])])
        fanout.yield(.messages(batch))
        fanout.yield(.peerLost(PeerID(7)))
        #expect(
            each.all == [
                .data(from: PeerID(7), bytes: ByteBuffer(bytes: [1]), reliable: true),
                .data(from: PeerID(7), bytes: ByteBuffer(bytes: [2]), reliable: true), .peerLost(PeerID(7)),
            ])
        #expect(whole.all == [.messages(batch), .peerLost(PeerID(7))])
    }

    @Test("finish tells every observer once; one that comes later is told at once; one that stopped is not told")
    func finishAndStop() throws {
        let fanout = Self.fanout()
        let staying = Observed()
        let leaving = Observed()
        fanout.observe({ staying.take($0) }, finished: { staying.finished.add(1, ordering: .relaxed) })
        let observation = fanout.observe(
            { leaving.take($0) }, finished: { leaving.finished.add(1, ordering: .relaxed) })
        fanout.yield(.peerLost(PeerID(1)))
        fanout.stopObserving(try #require(observation))
        fanout.yield(.peerLost(PeerID(2)))
        fanout.finish()
        fanout.yield(.peerLost(PeerID(3)))
        #expect(staying.all == [.peerLost(PeerID(1)), .peerLost(PeerID(2))])
        #expect(leaving.all == [.peerLost(PeerID(1))])
        #expect(staying.finished.load(ordering: .relaxed) == 1)
        #expect(leaving.finished.load(ordering: .relaxed) == 0)
        let late = Observed()
        #expect(fanout.observe({ late.take($0) }, finished: { late.finished.add(1, ordering: .relaxed) }) == nil)
        #expect(late.finished.load(ordering: .relaxed) == 1)
    }

    @Test("an observer may stop observing from inside its own call: it sees nothing after")
    func stopFromInside() {
        let fanout = Self.fanout()
        let observed = Observed()
        let slot = Slot()
        let made = fanout.observe { event in
            observed.take(event)
            if let mine = slot.observation.withLock({ $0 }) { fanout.stopObserving(mine) }
        }
        slot.observation.withLock { $0 = made }
        fanout.yield(.peerLost(PeerID(1)))
        fanout.yield(.peerLost(PeerID(2)))
        #expect(observed.all == [.peerLost(PeerID(1))])
    }
}
