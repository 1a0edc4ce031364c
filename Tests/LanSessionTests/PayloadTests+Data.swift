import Crypto
import Foundation
import NIOCore
import Synchronization
import TestSupport
import Testing
import WireCodec

@testable import LanSession

extension PayloadTests {
    /// Data over loopback: exactly once and in order, its limits, every event for every reader, and what a member
    /// away gets.
    @Suite("Data and events over loopback")
    struct DataTests {
        @Test("reliable data arrives exactly once and in order, across a link cut")
        func dataExactlyOnce() async throws {
            let (a, b, _) = try await pair()
            let recorder = EventRecorder(b)
            for index in 0..<600 {
                try await a.send(Array("message \(index)".utf8), to: [b.peerID])
                if index == 250 { try await a.dropLink(to: b.peerID) }
            }
            try await a.send(Array("last".utf8), to: [b.peerID])
            // In order: once the last message is in, a doubled one would be in too.
            let arrived = await recorder.wait(timeout: .seconds(10)) { payloads($0).last == Array("last".utf8) }
            #expect(arrived)
            let got = payloads(recorder.events).map { String(decoding: $0, as: UTF8.self) }
            let expected = (0..<600).map { "message \($0)" } + ["last"]
            #expect(got.count == 601)
            #expect(
                got == expected,
                "first difference at \(got.indices.first { $0 < expected.count && got[$0] != expected[$0] } ?? -1)")
            await stopAll([a, b])
        }

        @Test("data past the limit and to strangers is refused with a clear error")
        func dataLimits() async throws {
            let (a, b, _) = try await pair()
            await #expect(throws: SessionError.self) {
                try await a.send([UInt8](repeating: 1, count: Session.maxMessageSize + 1))
            }
            do {
                try await a.send([1], to: [PeerID(99)])
                Issue.record("a stranger was accepted")
            } catch {
                #expect(error.code == .noSuchPeer)
                #expect(error.message.contains("peer-2"), "the members are listed: \(error.message)")
            }
            do {
                try await a.send([UInt8](repeating: 1, count: 2000), mode: .unreliable)
                Issue.record("an oversized datagram was accepted")
            } catch {
                #expect(error.code == .messageTooLarge)
            }
            try await a.send([UInt8](repeating: 1, count: Session.maxMessageSize))  // the limit itself goes
            await stopAll([a, b])
        }

        @Test("two observers both see every event")
        func twoObservers() async throws {
            let (a, b, _) = try await pair()
            let first = EventRecorder(b)
            let second = EventRecorder(b)
            for index in 0..<100 { try await a.send([UInt8(index)]) }
            #expect(await first.wait { payloads($0).count == 100 })
            #expect(await second.wait { payloads($0).count == 100 })
            #expect(payloads(first.events) == payloads(second.events))
            await stopAll([a, b])
        }

        @Test("a subscriber that falls behind keeps the oldest events and is told how many it missed")
        func slowSubscriber() async throws {
            let (a, b, _) = try await pair()
            let slow = b.subscribe(bufferSize: 10)
            let fast = EventRecorder(b)
            for index in 0..<50 { try await a.send([UInt8(index)]) }
            #expect(await fast.wait { payloads($0).count == 50 })
            // The fast reader can see the last event while the loop is still offering it to the slow one: a call on the
            // loop returns only after that.
            _ = try await b.peers()
            var iterator = slow.makeAsyncIterator()
            var kept: [SessionEvent] = []
            for _ in 0..<10 { if let event = await iterator.next() { kept.append(event) } }
            #expect(payloads(kept) == (0..<10).map { [UInt8($0)] }, "the oldest ten are kept")
            try await a.send([200])
            var after: [SessionEvent] = []
            while after.count < 20, let event = await iterator.next() {
                after.append(event)
                if case .data(_, let bytes, _) = event, Array(bytes.readableBytesView) == [200] { break }
            }
            #expect(after.first == .eventsMissed(40), "told of the 40 it missed, before anything newer: \(after)")
            #expect(payloads(after) == [[200]])
            await stopAll([a, b])
        }

        @Test(
            "for a member away past the delivery timeout, waiting data and transfers fail; what was sent arrives later")
        func deliveryTimeout() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            // Both redial after 2.5 s; room for 44 KiB of data beyond what the session keeps for itself.
            let a = try makeSession(1) {
                $0.reconnectInitialDelay = .milliseconds(2_500)
                $0.reconnectMaximumDelay = .seconds(5)
                $0.deliveryTimeout = .seconds(1)
                $0.replayBufferBytes = StreamMultiplexer.reservedReplayBytes + 44 << 10
            }
            let b = try makeSession(2, inbox: directory.path) {
                $0.reconnectInitialDelay = .milliseconds(2_500)
                $0.reconnectMaximumDelay = .seconds(5)
            }
            let eventsA = EventRecorder(a)
            let eventsB = EventRecorder(b)
            try await mesh([a, b])
            #expect(try await waitUntil { try await a.connectedPeers().count == 1 })
            try await a.dropLink(to: b.peerID)
            #expect(await eventsA.wait { $0.contains(.peerLost(b.peerID)) })
            let away = ContinuousClock.now
            try await a.send(Array("on the channel".utf8), to: [b.peerID])  // fits: kept for b
            let (path, _) = try file(size: 100_000, seed: 5)
            async let waitingData: SessionError? = {
                do {
                    try await a.send([UInt8](repeating: 7, count: 60 << 10), to: [b.peerID])
                    return nil
                } catch { return error as? SessionError }
            }()
            async let transfer: SessionError? = {
                do {
                    try await a.sendResource(at: path, to: b.peerID)
                    return nil
                } catch { return error as? SessionError }
            }()
            let (dataError, transferError) = await (waitingData, transfer)
            let waited = ContinuousClock.now - away
            #expect(dataError?.code == .timedOut, "\(String(describing: dataError))")
            #expect(dataError?.message.contains("away") == true)
            #expect(transferError?.code == .timedOut, "\(String(describing: transferError))")
            #expect(waited >= .seconds(1) && waited < .milliseconds(2_500), "failed at the timeout: \(waited)")
            // Back: what was on the channel arrives, once; the receiver hears that the transfer failed.
            #expect(await eventsB.wait(timeout: .seconds(10)) { payloads($0) == [Array("on the channel".utf8)] })
            #expect(
                await eventsB.wait {
                    $0.contains { if case .transfer(let t) = $0, case .failed = t.phase { true } else { false } }
                })
            await stopAll([a, b])
        }

        @Test("data sent to a member while it was away reaches it after it restarted; none is doubled")
        func dataToARestartedPeer() async throws {
            let slow: (inout SessionConfiguration) -> Void = {
                $0.reconnectInitialDelay = .seconds(3)
                $0.reconnectMaximumDelay = .seconds(5)
            }
            let a = try makeSession(1, configure: slow)
            let b = try makeSession(2, configure: slow)
            let eventsA = EventRecorder(a)
            try await mesh([a, b])
            #expect(try await waitUntil { try await a.connectedPeers().count == 1 })
            try await a.send(Array("before".utf8), to: [b.peerID])
            try await a.dropLink(to: b.peerID)
            #expect(await eventsA.wait { $0.contains(.peerLost(b.peerID)) })
            for index in 0..<3 { try await a.send(Array("while away \(index)".utf8), to: [b.peerID]) }
            await b.stop()  // no link left: it goes without a word, as a killed process does
            let restarted = try makeSession(2)
            let eventsB = EventRecorder(restarted)
            try await restarted.start()
            try await restarted.connect(to: await a.endpoint)
            let expected = (0..<3).map { Array("while away \($0)".utf8) }
            #expect(await eventsB.wait { payloads($0).count >= 3 }, "got \(payloads(eventsB.events).count)")
            try await a.send(Array("after".utf8), to: [b.peerID])
            #expect(await eventsB.wait { payloads($0).last == Array("after".utf8) })
            #expect(payloads(eventsB.events) == expected + [Array("after".utf8)])
            await stopAll([a, restarted])
        }
    }
}
