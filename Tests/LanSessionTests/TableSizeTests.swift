import Foundation
import NIOCore
import NIOPosix
import TestSupport
import Testing
import WireCodec

@testable import LanSession

/// Every table of a session keyed by a peer, an incarnation, a link, a transfer, a stream, a ping or a subscriber comes
/// back to its size once its keys are gone: a session that runs for months with peers restarting, links flapping and
/// transfers coming and going holds no more than one that just started (``Session/tableSizes()``).
@Suite("Table sizes")
struct TableSizeTests {
    /// How many times each kind of key comes and goes.
    static let cycles = 200

    /// Waits until `session`'s tables are `baseline` again; on timeout, records which ones are not.
    static func expectBaseline(
        _ session: Session, _ baseline: [String: Int], after what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var sizes: [String: Int] = [:]
        let back = try await waitUntil(.seconds(10)) {
            sizes = try await session.tableSizes()
            return sizes == baseline
        }
        let grown = sizes.filter { baseline[$0.key] != $0.value }.map {
            "\($0.key): \(baseline[$0.key] ?? 0) → \($0.value)"
        }
        #expect(back, "after \(what): \(grown.sorted().joined(separator: ", "))", sourceLocation: sourceLocation)
    }

    /// Two sessions on one loop, connected, with datagrams through; the second takes files in `inbox`.
    static func pair(loop: any EventLoop, inbox: String) async throws -> (Session, Session) {
        let a = try makeSession(1, eventLoop: loop) { $0.reconnectInitialDelay = .milliseconds(5) }
        let b = try makeSession(2, inbox: inbox, eventLoop: loop) { $0.reconnectInitialDelay = .milliseconds(5) }
        #expect(try await connectedMesh([a, b]))
        #expect(try await waitUntil { try await a.peers().first?.unreliable == .udp })
        // What each side told the other of the members, and heard, is kept while the peer is known.
        #expect(
            try await waitUntil {
                let sizes = try await a.tableSizes()
                return sizes["membersTold"] == 1 && sizes["membersHeard"] == 1
            })
        return (a, b)
    }

    @Test("subscribers, pings, data, streams and transfers coming and going leave every table as it was")
    func payloadsAndSubscribers() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let inbox = FileManager.default.temporaryDirectory.appendingPathComponent("tables-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: inbox) }
        let (a, b) = try await Self.pair(loop: group.next(), inbox: inbox)
        let baseline = try await a.tableSizes()
        #expect(baseline["peers"] == 1 && baseline["links"] == 1 && baseline["datagramRoutes"] == 1, "\(baseline)")

        for _ in 0..<Self.cycles {
            var events: AsyncStream<SessionEvent>? = a.subscribe()
            _ = events
            events = nil
            let observation = a.observe { _ in }
            if let observation { a.stopObserving(observation) }
        }
        try await Self.expectBaseline(a, baseline, after: "subscribers and observers")

        for index in 0..<Self.cycles {
            _ = try await a.ping(b.peerID, unreliable: index % 2 == 1)
            try await a.send([UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 1024), to: [b.peerID])
        }
        try await Self.expectBaseline(a, baseline, after: "pings and data")

        // Byte streams the receiver reads to their end, and others it never reads, cancelled by the writer.
        let opened = b.subscribe()
        var incoming = opened.makeAsyncIterator()
        for index in 0..<Self.cycles {
            let stream = try await a.openStream(named: "s\(index)", to: b.peerID)
            var reader: IncomingByteStream?
            while reader == nil, let event = await incoming.next() {
                if case .streamOpened(let stream) = event { reader = stream }
            }
            if index % 2 == 0 {
                try await stream.write([1, 2, 3])
                try await stream.finish()
                for try await _ in try #require(reader) {}
            } else {
                await stream.cancel()
            }
        }
        try await Self.expectBaseline(a, baseline, after: "byte streams")
        try await Self.expectBaseline(b, try await b.tableSizes(), after: "byte streams, at the receiver")

        // Files sent to their end, and others cancelled by the sender as they start.
        let path = "\(inbox).source"
        _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: 100_000))
        defer { try? FileManager.default.removeItem(atPath: path) }
        for index in 0..<(Self.cycles / 4) {
            let sending = Task { try await a.sendResource(at: path, named: "f\(index % 4).bin", to: b.peerID) }
            if index % 2 == 1 { sending.cancel() }
            _ = try? await sending.value
        }
        try await Self.expectBaseline(a, baseline, after: "transfers")
        let sending = try await a.transfers()
        let receiving = try await b.transfers()
        #expect(sending.isEmpty && receiving.isEmpty, "\(sending) \(receiving)")

        await stopAll([a, b])
        try await group.shutdownGracefully()
    }

    @Test("links flapping and a peer restarting on a new port leave every table as it was")
    func linksAndIncarnations() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let inbox = FileManager.default.temporaryDirectory.appendingPathComponent("tables-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: inbox) }
        var (a, b) = try await Self.pair(loop: group.next(), inbox: inbox)
        let baseline = try await a.tableSizes()

        for _ in 0..<Self.cycles {
            try await a.dropLink(to: b.peerID)
            #expect(try await waitUntil { try await bothConnected(a, b) })
        }
        try await Self.expectBaseline(a, baseline, after: "\(Self.cycles) links dropped")

        // The peer's process goes without a word (its links closed under it) and comes back on another port: a new
        // incarnation, as after a crash.
        for _ in 0..<(Self.cycles / 4) {
            try await b.dropLink(to: a.peerID)
            await b.stop()
            b = try makeSession(2, inbox: inbox, eventLoop: group.next()) {
                $0.reconnectInitialDelay = .milliseconds(5)
            }
            try await b.start()
            try await b.connect(to: await a.endpoint)
            #expect(try await waitUntil { try await bothConnected(a, b) })
        }
        try await Self.expectBaseline(a, baseline, after: "\(Self.cycles / 4) incarnations of the peer")

        await stopAll([a, b])
        try await group.shutdownGracefully()
    }
}
