import LanSession
import NIOCore
import Synchronization
import Testing
import WireCodec

/// A store that records every save and fails while told to.
final class RecordingStore: LocalCountStore {
    private let state = Mutex<(saved: [UInt64], failing: Bool)>(([], false))

    var saved: [UInt64] { state.withLock { $0.saved } }

    func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }

    func save(localCount count: UInt64) throws {
        try state.withLock { state in
            if state.failing { throw StoreFull() }
            state.saved.append(count)
        }
    }

    struct StoreFull: Error, CustomStringConvertible {
        var description: String { "No space left on device" }
    }
}

/// The counter across real sessions on loopback: relays, durable increments, exact counts.
@Suite("Counter over loopback", .serialized)
struct CounterSessionTests {
    func counts(_ session: Session, of peer: Session) async throws -> UInt64 {
        try await session.counter()[peer.peerID]
    }

    @Test("a count reaches a peer with no link to its owner through a third peer, with no reconnect")
    func relayedByAntiEntropy() async throws {
        // A chain one - three - two: one and two never link (each takes one peer only, though three tells each of
        // them about the other).
        let one = try makeSession(1, maxPeers: 1)
        let two = try makeSession(2, maxPeers: 1)
        let three = try makeSession(3)
        let sessions = [one, two, three]
        for session in sessions { try await session.start() }
        try await one.connect(to: await three.endpoint)
        try await two.connect(to: await three.endpoint)
        #expect(try await eventually { try await three.connectedPeers().count == 2 })
        for _ in 0..<50 { try await one.increment() }
        try await two.increment(by: 7)
        let converged = try await eventually {
            let seenByTwo = try await two.counter()
            let seenByOne = try await one.counter()
            return seenByTwo[one.peerID] == 50 && seenByOne[two.peerID] == 7 && seenByTwo.total == 57
                && seenByOne.total == 57
        }
        let seenByTwo = try await two.counter().counts
        let seenByOne = try await one.counter().counts
        #expect(converged, "two sees \(seenByTwo), one sees \(seenByOne)")
        #expect(try await one.connectedPeers().map(\.peerID) == [three.peerID], "one and two must not link")
        await stopAll(sessions)
    }

    @Test("a failed save sends nothing and counts nowhere; the next increment counts once")
    func failedSaveSendsNothing() async throws {
        let store = RecordingStore()
        var configuration = SessionConfiguration(
            peerID: PeerID(1), displayName: "one", sessionName: "test", host: "127.0.0.1")
        configuration.localCountStore = store
        let one = try Session(configuration: configuration)
        let two = try makeSession(2)
        let events = EventRecorder(two)
        try await mesh([one, two])
        #expect(try await eventually { try await one.connectedPeers().count == 1 })
        store.fail(true)
        await #expect(throws: SessionError.self) { try await one.increment() }
        #expect(try await one.counter()[one.peerID] == 0)
        store.fail(false)
        #expect(try await one.increment(by: 2) == 2)
        #expect(try await eventually { try await counts(two, of: one) == 2 })
        // Had the failed increment been sent, two would have seen a count of 1 first.
        func seen(_ events: [SessionEvent]) -> [UInt64] {
            events.compactMap { event -> UInt64? in
                if case .counter(PeerID(1), let count, _) = event { count } else { nil }
            }
        }
        #expect(await events.wait { seen($0).contains(2) })
        #expect(seen(events.events) == [2])
        #expect(store.saved == [2])
        await stopAll([one, two])
    }

    @Test("concurrent increments are saved in order, each before it is sent, and counted exactly")
    func concurrentIncrements() async throws {
        let store = RecordingStore()
        var configuration = SessionConfiguration(
            peerID: PeerID(1), displayName: "one", sessionName: "test", host: "127.0.0.1")
        configuration.localCountStore = store
        let one = try Session(configuration: configuration)
        let two = try makeSession(2)
        try await mesh([one, two])
        #expect(try await eventually { try await one.connectedPeers().count == 1 })
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 { group.addTask { _ = try? await one.increment() } }
        }
        #expect(try await one.counter()[one.peerID] == 200)
        #expect(store.saved == Array(1...200))
        #expect(try await eventually { try await counts(two, of: one) == 200 })
        await stopAll([one, two])
    }
}
