import BubblesAndCounter
import LanSession
import NIOCore
import NIOPosix
import Synchronization
import TestSupport
import Testing
import WireCodec

/// A store that records every save (and whether it ran on an event loop) and fails while told to.
final class RecordingStore: LocalCountStore {
    private let state = Mutex<(saved: [UInt64], onLoop: [Bool], failing: Bool)>(([], [], false))
    let savesInPlace: Bool

    init(savesInPlace: Bool = false) {
        self.savesInPlace = savesInPlace
    }

    var saved: [UInt64] { state.withLock { $0.saved } }
    var savedOnLoop: [Bool] { state.withLock { $0.onLoop } }

    func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }

    func save(localCount count: UInt64) throws {
        try state.withLock { state in
            if state.failing { throw StoreFull() }
            state.saved.append(count)
            state.onLoop.append(MultiThreadedEventLoopGroup.currentEventLoop != nil)
        }
    }

    struct StoreFull: Error, CustomStringConvertible {
        var description: String { "No space left on device" }
    }
}

/// What an observer was called with.
final class Observed: Sendable {
    let events = Mutex<[BubblesAndCounterEvent]>([])
}

/// A session on loopback with the apps added, not started.
func makeApp(
    _ id: UInt64, maxPeers: Int = 8, store: RecordingStore? = nil, eventLoop: (any EventLoop)? = nil,
    configure: (inout SessionConfiguration) -> Void = { _ in }
) async throws -> BubblesAndCounterApp {
    let session = try makeSession(id, maxPeers: maxPeers, eventLoop: eventLoop, configure: configure)
    return try await BubblesAndCounterApp(
        session: session, configuration: BubblesAndCounterApp.Configuration(localCountStore: store))
}

/// The original apps across real sessions on loopback: relays, durable increments, exact counts, bubbles.
@Suite("BubblesAndCounterApp over loopback", .serialized)
struct BubblesAndCounterAppTests {
    func counts(_ app: BubblesAndCounterApp, of peer: BubblesAndCounterApp) async throws -> UInt64 {
        try await app.counter()[peer.session.peerID]
    }

    @Test("a count reaches a peer with no link to its owner through a third peer, with no reconnect")
    func relayedByAntiEntropy() async throws {
        // A chain one - three - two: one and two never link (each takes one peer only, though three tells each of
        // them about the other).
        let one = try await makeApp(1, maxPeers: 1)
        let two = try await makeApp(2, maxPeers: 1)
        let three = try await makeApp(3)
        let sessions = [one.session, two.session, three.session]
        for session in sessions { try await session.start() }
        try await one.session.connect(to: await three.session.endpoint)
        try await two.session.connect(to: await three.session.endpoint)
        #expect(try await waitUntil { try await three.session.connectedPeers().count == 2 })
        for _ in 0..<50 { try await one.increment() }
        try await two.increment(by: 7)
        let converged = try await waitUntil {
            let seenByTwo = try await two.counter()
            let seenByOne = try await one.counter()
            return seenByTwo[PeerID(1)] == 50 && seenByOne[PeerID(2)] == 7 && seenByTwo.total == 57
                && seenByOne.total == 57
        }
        let seenByTwo = try await two.counter().counts
        let seenByOne = try await one.counter().counts
        #expect(converged, "two sees \(seenByTwo), one sees \(seenByOne)")
        #expect(try await one.session.connectedPeers().map(\.peerID) == [PeerID(3)], "one and two must not link")
        await stopAll(sessions)
    }

    @Test("a failed save sends nothing and counts nowhere; the next increment counts once")
    func failedSaveSendsNothing() async throws {
        let store = RecordingStore()
        let one = try await makeApp(1, store: store)
        let two = try await makeApp(2)
        let events = EventRecorder(two.subscribe())
        #expect(try await connectedMesh([one.session, two.session]))
        store.fail(true)
        await #expect(throws: SessionError.self) { try await one.increment() }
        #expect(try await one.counter()[PeerID(1)] == 0)
        store.fail(false)
        #expect(try await one.increment(by: 2) == 2)
        #expect(try await waitUntil { try await counts(two, of: one) == 2 })
        // Had the failed increment been sent, two would have seen a count of 1 first.
        func seen(_ events: [BubblesAndCounterEvent]) -> [UInt64] {
            events.compactMap { event -> UInt64? in
                if case .counter(PeerID(1), let count, _) = event { count } else { nil }
            }
        }
        #expect(await events.wait { seen($0).contains(2) })
        #expect(seen(events.events) == [2])
        #expect(store.saved == [2])
        await stopAll([one.session, two.session])
    }

    @Test(
        "concurrent increments are saved in order, each before it is sent, and counted exactly; on the loop only by a store that saves in place",
        arguments: [false, true])
    func concurrentIncrements(savesInPlace: Bool) async throws {
        let store = RecordingStore(savesInPlace: savesInPlace)
        let one = try await makeApp(1, store: store)
        let two = try await makeApp(2)
        #expect(try await connectedMesh([one.session, two.session]))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 { group.addTask { _ = try? await one.increment() } }
        }
        #expect(try await one.counter()[PeerID(1)] == 200)
        #expect(store.saved == Array(1...200))
        #expect(store.savedOnLoop == Array(repeating: savesInPlace, count: 200))
        #expect(try await waitUntil { try await counts(two, of: one) == 200 })
        await stopAll([one.session, two.session])
    }

    @Test(
        "an increment done at once on the session's loop is saved, sent and seen by an observer before it returns; off the loop, or with a store that saves off it, nothing is done"
    )
    func incrementNow() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let store = RecordingStore(savesInPlace: true)
        let one = try await makeApp(1, store: store, eventLoop: loop)
        let two = try await makeApp(2)
        let observed = Observed()
        one.observe { event in observed.events.withLock { $0.append(event) } }
        #expect(try await connectedMesh([one.session, two.session]))
        let (local, seenAtOnce) = try await loop.submit {
            let local = try one.incrementNow(by: 3)
            return (local, observed.events.withLock { $0 })
        }.get()
        #expect(local == 3)
        #expect(seenAtOnce.contains(.counter(PeerID(1), count: 3, total: 3)), "sent before it returned: \(seenAtOnce)")
        #expect(store.saved == [3] && store.savedOnLoop == [true])
        #expect(try await waitUntil { try await counts(two, of: one) == 3 })
        #expect(try one.incrementNow() == nil, "off the loop")
        store.fail(true)
        let failed = try await loop.submit { () -> String? in
            do {
                _ = try one.incrementNow()
                return nil
            } catch {
                return (error as? SessionError)?.message
            }
        }.get()
        #expect(failed?.contains("nothing was sent") == true)
        store.fail(false)
        #expect(try await one.counter()[PeerID(1)] == 3)
        #expect(try await one.increment() == 4, "the way of a caller off the loop")
        let offLoopStore = RecordingStore(savesInPlace: false)
        let three = try await makeApp(3, store: offLoopStore, eventLoop: loop)
        try await three.session.start()
        #expect(try await loop.submit { try three.incrementNow() }.get() == nil)
        #expect(offLoopStore.saved.isEmpty)
        await stopAll([one.session, two.session, three.session])
        try await group.shutdownGracefully()
    }

    @Test("state that does not fit the replay buffer while a link is down is sent again whole; data is never lost")
    func fullReplayBufferKeepsData() async throws {
        // Neither side redials on its own within the test: the link comes back when the test dials, once the buffer
        // is full, however long a loaded machine takes to fill it (a redial after a few seconds sometimes came first).
        // Data keeps 1,024 messages of room for the session's own: 1,100 leave room for 76 data messages before data
        // waits.
        let redial: (inout SessionConfiguration) -> Void = {
            $0.reconnectInitialDelay = .seconds(600)
            $0.reconnectMaximumDelay = .seconds(600)
            $0.standbyRedialMaximumDelay = .seconds(600)
        }
        let a = try await makeApp(1, configure: redial)
        let b = try await makeApp(2) {
            redial(&$0)
            $0.replayBufferMessages = 1_100
        }
        let eventsA = EventRecorder(a.session)
        let eventsB = EventRecorder(b.session)
        try await a.session.start()
        try await b.session.start()
        try await b.session.connect(to: await a.session.endpoint)
        #expect(try await waitUntil { try await a.session.connectedPeers().count == 1 })
        #expect(try await waitUntil { try await b.session.connectedPeers().count == 1 })
        try await a.session.dropLink(to: PeerID(2))
        #expect(await eventsA.wait { $0.contains(.peerLost(PeerID(2))) })
        // Data first (it fits), then increments past the bound: each is read back before the next, so that each
        // leaves as a message of its own (those of one turn of the loop coalesce). Then data that must wait.
        for index in 0..<5 { try await b.session.send([0xDA, UInt8(index)], to: [PeerID(1)]) }
        for _ in 0..<1_200 {
            try await b.increment()
            _ = try await b.counter()
        }
        #expect(
            eventsB.events.contains {
                if case .notice(.replayBufferOverflowed(PeerID(1), _)) = $0 { true } else { false }
            },
            "the buffer was full while the link was down")
        async let waited: Void = b.session.send([0xDA, 5], to: [PeerID(1)])  // waits for room, then goes
        try await a.session.connect(to: await b.session.endpoint)  // a new address for a: dialled at once
        try await waited
        #expect(try await waitUntil(.seconds(10)) { try await a.counter()[PeerID(2)] == 1_200 })
        let data = {
            eventsA.events.compactMap { event -> [UInt8]? in
                if case .data(from: PeerID(2), let bytes, reliable: true) = event {
                    Array(bytes.readableBytesView)
                } else {
                    nil
                }
            }
        }
        #expect(await eventsA.wait { _ in data().count >= 6 })
        #expect(data() == (0..<6).map { [0xDA, UInt8($0)] }, "every data message, once, in order")
        #expect(!eventsA.events.contains { if case .resynchronised = $0 { true } else { false } }, "no gap")
        #expect(try await a.counter()[PeerID(2)] == 1_200)
        await stopAll([a.session, b.session])
    }

    @Test("a bubble picked up on one peer is held there on the other; only the holder's moves and drop apply")
    func bubbles() async throws {
        let a = try await makeApp(1)
        let b = try await makeApp(2)
        let eventsB = EventRecorder(b.subscribe())
        #expect(try await connectedMesh([a.session, b.session]))
        #expect(try await waitUntil { try await b.session.peers().first?.unreliable == .udp })
        try await a.pickUp(0)
        #expect(try await waitUntil { try await b.bubbles().bubbles[0].holder == PeerID(1) })
        await #expect(throws: SessionError.self) { try await b.move(0, x: 1, y: 1) }
        try await a.move(0, x: 10, y: 20)
        #expect(await eventsB.wait { $0.contains(.move(view: 0, x: 10, y: 20, by: PeerID(1))) })
        try await a.drop(0, x: 30, y: 40)
        #expect(await eventsB.wait { $0.contains(.drop(view: 0, x: 30, y: 40, by: PeerID(1))) })
        let bubble = try await b.bubbles().bubbles[0]
        #expect(bubble.holder == nil && bubble.x == 30 && bubble.y == 40)
        #expect(try await a.layout().indexes == [PeerID(1): 0, PeerID(2): 1])
        await stopAll([a.session, b.session])
    }

    @Test("the apps are added before the start, once: a second app of the same kinds is refused")
    func addedBeforeTheStart() async throws {
        let session = try makeSession(1)
        _ = try await BubblesAndCounterApp(session: session)
        await #expect(throws: SessionError.self) { _ = try await BubblesAndCounterApp(session: session) }
        try await session.start()
        let other = try makeSession(2)
        try await other.start()
        await #expect(throws: SessionError.self) { _ = try await BubblesAndCounterApp(session: other) }
        await stopAll([session, other])
    }

    @Test("three peers agree on player indexes; the lowest peer id coordinates")
    func threePeers() async throws {
        let apps = try await [makeApp(30), makeApp(10), makeApp(20)]
        #expect(try await connectedMesh(apps.map(\.session)))
        let expected: [PeerID: Int] = [PeerID(10): 0, PeerID(20): 1, PeerID(30): 2]
        for app in apps {
            #expect(try await waitUntil { try await app.layout().indexes == expected })
        }
        await stopAll(apps.map(\.session))
    }

    @Test("10,000 increments arrive exactly once")
    func tenThousandIncrements() async throws {
        let a = try await makeApp(1)
        let b = try await makeApp(2)
        #expect(try await connectedMesh([a.session, b.session]))
        for _ in 0..<10_000 { try await a.increment() }
        #expect(try await waitUntil(.seconds(10)) { try await b.counter()[PeerID(1)] == 10_000 })
        #expect(try await a.counter()[PeerID(1)] == 10_000)
        await stopAll([a.session, b.session])
    }

    @Test("increments both ways across link cuts count exactly once")
    func cutAndResume() async throws {
        let a = try await makeApp(1)
        let b = try await makeApp(2)
        #expect(try await connectedMesh([a.session, b.session]))
        for round in 0..<5 {
            for _ in 0..<1_000 { try await a.increment() }
            if round < 4 { try await a.session.dropLink(to: PeerID(2)) }
            for _ in 0..<1_000 { try await b.increment() }
        }
        let expected: [PeerID: UInt64] = [PeerID(1): 5_000, PeerID(2): 5_000]
        #expect(try await waitUntil(.seconds(15)) { try await b.counter().counts == expected })
        #expect(try await waitUntil(.seconds(15)) { try await a.counter().counts == expected })
        await stopAll([a.session, b.session])
    }

    @Test("moves from the holder arrive; the drop lands everywhere")
    func moves() async throws {
        let a = try await makeApp(1)
        let b = try await makeApp(2)
        let eventsB = EventRecorder(b.subscribe())
        try await mesh([a.session, b.session])
        #expect(try await waitUntil { try await b.session.peers().first?.unreliable == .udp })
        try await a.pickUp(0)
        #expect(try await waitUntil { try await b.bubbles().bubbles[0].holder == PeerID(1) })
        for step in 1...100 { try await a.move(0, x: Float(step), y: Float(2 * step)) }
        #expect(await eventsB.wait { $0.contains(.move(view: 0, x: 100, y: 200, by: PeerID(1))) })
        try await a.drop(0, x: 123, y: 456)
        #expect(
            try await waitUntil {
                let bubble = try await b.bubbles().bubbles[0]
                return bubble.holder == nil && bubble.x == 123 && bubble.y == 456
            })
        await stopAll([a.session, b.session])
    }

    @Test("without datagrams, moves go on the reliable link")
    func movesWithoutDatagrams() async throws {
        let a = try await makeApp(1)
        let b = try await makeApp(2) { $0.datagrams = false }
        let eventsB = EventRecorder(b.subscribe())
        try await mesh([a.session, b.session])
        #expect(try await waitUntil { try await a.session.peers().first?.unreliable == .fallback })
        try await a.pickUp(1)
        #expect(try await waitUntil { try await b.bubbles().bubbles[1].holder == PeerID(1) })
        try await a.move(1, x: 7, y: 8)
        #expect(await eventsB.wait { $0.contains(.move(view: 1, x: 7, y: 8, by: PeerID(1))) })
        await stopAll([a.session, b.session])
    }

    @Test("a pick-up conflict resolves to the same holder everywhere")
    func pickUpConflict() async throws {
        for _ in 0..<5 {
            let apps = try await [makeApp(1), makeApp(2), makeApp(3)]
            #expect(try await connectedMesh(apps.map(\.session)))
            async let first: Void = apps[1].pickUp(2)
            async let second: Void = apps[2].pickUp(2)
            _ = try await (first, second)
            #expect(
                try await waitUntil {
                    let holders = try await [apps[0].bubbles(), apps[1].bubbles(), apps[2].bubbles()]
                        .map { $0.bubbles[2].holder }
                    return holders[0] != nil && Set(holders).count == 1
                })
            let holder = try await apps[0].bubbles().bubbles[2].holder
            #expect(holder == PeerID(2) || holder == PeerID(3))
            await stopAll(apps.map(\.session))
        }
    }

    @Test(
        "a late joiner with the lowest peer id sees the bubbles as they are (held, moved, dropped) and the counts; the others' boards stand"
    )
    func lateJoiner() async throws {
        // Three will join last, with the lowest id: it becomes the coordinator, with a board of its own to learn.
        let two = try await makeApp(2)
        let four = try await makeApp(4)
        let one = try await makeApp(1)
        #expect(try await connectedMesh([two.session, four.session]))
        try await two.pickUp(0)
        #expect(try await waitUntil { try await four.bubbles().bubbles[0].holder == two.session.peerID })
        for step in 1...5 { try await two.move(0, x: Float(100 + step), y: Float(200 + step)) }
        try await four.pickUp(1)
        // The coordinator (two) decides; four holds it once the decision is back.
        #expect(try await waitUntil { try await four.bubbles().bubbles[1].holder == four.session.peerID })
        try await four.drop(1, x: 10, y: 20)
        _ = try await two.increment(by: 5)
        _ = try await four.increment(by: 3)
        #expect(
            try await waitUntil {
                let seenByTwo = try await two.bubbles().bubbles[0].x
                let seenByFour = try await four.bubbles().bubbles[0].x
                return seenByTwo == 105 && seenByFour == 105
            })
        #expect(try await waitUntil { try await two.bubbles().bubbles[1].holder == nil })
        let expected = try await two.bubbles().bubbles
        try await one.session.start()
        let joined = ContinuousClock.now
        try await one.session.connect(to: await two.session.endpoint)
        try await one.session.connect(to: await four.session.endpoint)
        let caughtUp = try await waitUntil(.seconds(1)) {
            let board = try await one.bubbles().bubbles
            let counter = try await one.counter()
            return board.map(\.holder) == expected.map(\.holder) && board.map(\.x) == expected.map(\.x)
                && board.map(\.y) == expected.map(\.y) && counter.total == 8
        }
        print("measured: the late joiner caught up \(ContinuousClock.now - joined) after it started")
        let shown = try await one.bubbles().bubbles
        #expect(caughtUp, "the late joiner shows \(shown), the others \(expected)")
        // The others' boards were not overwritten by the newcomer's, though it coordinates now: whatever it sent
        // before an increment arrived before it (one reliable channel, in order).
        _ = try await one.increment(by: 1)
        #expect(
            try await waitUntil {
                let (seenByTwo, seenByFour) = (try await two.counter(), try await four.counter())
                return seenByTwo.total == 9 && seenByFour.total == 9
            },
            "the newcomer's increment did not arrive")
        #expect(try await one.layout().coordinator == PeerID(1))
        #expect(try await two.bubbles().bubbles.map(\.holder) == expected.map(\.holder))
        #expect(try await four.bubbles().bubbles.map(\.x) == expected.map(\.x))
        // The holder still moves it, and the newcomer follows.
        try await two.move(0, x: 300, y: 300)
        #expect(try await waitUntil { try await one.bubbles().bubbles[0].x == 300 })
        await stopAll([one.session, two.session, four.session])
    }
}
