import BubblesAndCounter
import Foundation
import LanSession
import Logging
import NIOPosix
import SessionControl
import TestSupport
import Testing

@testable import sessiond

/// The dispatcher on a session of its own on loopback, with typed commands and typed results: no JSON.
@Suite("ControlDispatcher")
struct ControlDispatcherTests {
    /// A dispatcher on a started session, peer id 1; stopped after `body`.
    static func withDispatcher(_ body: (ControlDispatcher) async throws -> Void) async throws {
        let session = try makeSession(1, name: "one")
        let app = try await BubblesAndCounterApp(session: session)
        _ = try await session.start()
        let logger = Logger(label: "test")
        let hub = EventHub(loop: MultiThreadedEventLoopGroup.singleton.next())
        let dispatcher = ControlDispatcher(
            session: session, app: app, hub: hub, desk: StreamDesk(session: session, logger: logger),
            page: PageLocation(), bluetooth: BluetoothState(), logger: logger)
        do {
            try await body(dispatcher)
        } catch {
            await session.stop()
            throw error
        }
        await session.stop()
    }

    @Test("status, increment, counter and bubbles answer with their results")
    func results() async throws {
        try await Self.withDispatcher { dispatcher in
            guard case .success(.status(let status)) = await dispatcher.handle(.status) else {
                Issue.record("no status")
                return
            }
            #expect(status.name == "one")
            #expect(status.peerID == "0000000000000001")
            #expect(status.peers == 0)
            #expect(await dispatcher.handle(.increment(count: 3)) == .success(.increment(IncrementResult(local: 3))))
            #expect(
                await dispatcher.handle(.counter)
                    == .success(.counter(CounterResult(local: 3, peers: [:], total: 3))))
            guard case .success(.bubbles(let bubbles)) = await dispatcher.handle(.bubbles) else {
                Issue.record("no bubbles")
                return
            }
            #expect(bubbles.map(\.view) == [0, 1, 2])
            #expect(bubbles.allSatisfy { $0.holder == nil })
            #expect(await dispatcher.handle(.peers) == .success(.peers([])))
            #expect(await dispatcher.handle(.transfers) == .success(.transfers([])))
            #expect(await dispatcher.handle(.invitations) == .success(.invitations([])))
        }
    }

    @Test("what cannot be done is an error with the documented message")
    func refusals() async throws {
        try await Self.withDispatcher { dispatcher in
            let refusals: [(ControlCommand, String)] = [
                (.pickUp(view: 7), "no bubble 7; bubbles are 0, 1, 2"),
                (.move(view: -1, x: 0, y: 0), "no bubble -1; bubbles are 0, 1, 2"),
                (.web, "the page is off: start sessiond with --http [ADDR:]PORT"),
                (.cancel(transfer: "out:x/1"), "no transfer out:x/1 under way; under way: none"),
                (.send(data: Data("hi".utf8), peer: "nobody"), #"no peer "nobody" in the session; peers: none"#),
                (
                    .bench(ControlCommand.Bench(peer: "h2", transport: "le")),
                    "no le transport here (this daemon runs: lan)"
                ),
                (.bench(ControlCommand.Bench(peer: "nobody")), #"no connected peer "nobody""#),
                (.watch(), "watch is the connection's to answer"),
            ]
            for (command, message) in refusals {
                #expect(await dispatcher.handle(command) == .failure(ControlError(message)), "\(command)")
            }
        }
    }

    @Test("an increment is answered on the loop, as handle answers it; anything else is left to handle")
    func handleNow() async throws {
        try await Self.withDispatcher { dispatcher in
            #expect(dispatcher.handleNow(.status) == nil)
            let now = dispatcher.handleNow(.increment(count: 2))
            #expect(now == nil || now == .success(.increment(IncrementResult(local: 2))))
        }
    }
}
