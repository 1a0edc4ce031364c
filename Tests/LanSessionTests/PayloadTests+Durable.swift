import Foundation
import Logging
import NIOCore
import NIOEmbedded
import TestSupport
import Testing
import WireCodec

@testable import LanSession

extension PayloadTests {
    @Suite("Durable messages", .serialized)
    struct Durable {
        /// A fresh directory for a session's durable messages.
        static func directory() throws -> String {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("durable-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url.path
        }

        static func text(_ events: [SessionEvent]) -> [String] {
            PayloadTests.payloads(events).map { String(decoding: $0, as: UTF8.self) }
        }

        @Test("durable messages arrive once and in order; once acknowledged, the log keeps none")
        func deliveredAndForgotten() async throws {
            let directory = try Self.directory()
            let a = try makeSession(1) { $0.durableDirectory = directory }
            let b = try makeSession(2)
            let eventsB = EventRecorder(b)
            try await mesh([a, b])
            #expect(try await waitUntil { try await a.connectedPeers().count == 1 })
            for index in 0..<50 {
                try await a.send(Array("durable \(index)".utf8), to: [b.peerID], mode: .durable)
            }
            let sent = (0..<50).map { "durable \($0)" }
            #expect(await eventsB.wait { Self.text($0).count >= 50 })
            #expect(Self.text(eventsB.events) == sent)
            // What b acknowledged is no longer kept: a log read afresh holds nothing for it.
            #expect(
                await waitUntil {
                    DurableLog(directory: directory, loop: EmbeddedEventLoop(), logger: .init(label: "t")).keptCount
                        == 0
                })
            await stopAll([a, b])
        }

        @Test("a sender restarted with messages on its disk sends them first; the receiver drops what it had")
        func restartedSenderResends() async throws {
            let first = try Self.directory()
            let a = try makeSession(1) { $0.durableDirectory = first }
            let b = try makeSession(2)
            let eventsB = EventRecorder(b)
            try await mesh([a, b])
            #expect(try await waitUntil { try await a.connectedPeers().count == 1 })
            for text in ["m1", "m2", "m3"] { try await a.send(Array(text.utf8), to: [b.peerID], mode: .durable) }
            #expect(await eventsB.wait { Self.text($0).count == 3 })
            await a.stop()
            // As if it was killed before the acknowledgements reached its disk: its log holds all three, and a fourth
            // that b never had.
            let second = try Self.directory()
            var records: [UInt8] = []
            for (id, text) in ["m1", "m2", "m3", "m4"].enumerated() {
                DurableLogFile.append(
                    .message, [b.peerID.rawValue, UInt64(id + 1)], payload: ByteBuffer(string: text).readableBytesView,
                    to: &records)
            }
            try Data(records).write(to: URL(fileURLWithPath: second + "/" + DurableLog.fileName))
            let restarted = try makeSession(1) { $0.durableDirectory = second }
            try await restarted.start()
            try await restarted.send(Array("m5".utf8), to: [b.peerID], mode: .durable)  // b is known: it waits
            try await restarted.connect(to: await b.endpoint)
            #expect(await eventsB.wait { Self.text($0).count >= 5 })
            try await restarted.send(Array("after".utf8), to: [b.peerID])
            #expect(await eventsB.wait { Self.text($0).last == "after" })
            #expect(Self.text(eventsB.events) == ["m1", "m2", "m3", "m4", "m5", "after"], "none doubled, in order")
            await stopAll([restarted, b])
        }

        @Test("a full disk fails the durable send with the system's reason, and nothing goes")
        func fullDisk() async throws {
            let directory = try Self.directory()
            try FileManager.default.createSymbolicLink(
                atPath: directory + "/" + DurableLog.fileName, withDestinationPath: "/dev/full")
            let a = try makeSession(1) { $0.durableDirectory = directory }
            let b = try makeSession(2)
            let eventsB = EventRecorder(b)
            try await mesh([a, b])
            #expect(try await waitUntil { try await a.connectedPeers().count == 1 })
            await #expect {
                try await a.send(Array("lost?".utf8), to: [b.peerID], mode: .durable)
            } throws: { error in
                (error as? SessionError)?.code == .io && "\(error)".contains("No space left on device")
            }
            try await a.send(Array("plain".utf8), to: [b.peerID])
            #expect(await eventsB.wait { Self.text($0).contains("plain") })
            #expect(Self.text(eventsB.events) == ["plain"])
            // To every member when there is none: nothing to keep, and the send returns at once.
            let alone = try makeSession(3) { $0.durableDirectory = directory }
            try await alone.start()
            try await alone.send(Array("to nobody".utf8), mode: .durable)
            await alone.stop()
            // Without a directory, a durable send says what it needs.
            await #expect(throws: SessionError.self) {
                try await b.send(Array("x".utf8), to: [a.peerID], mode: .durable)
            }
            await stopAll([a, b])
        }

        @Test("a receiver restarted after a crash still drops the copies: its receipts are in its directory")
        func receiptsAcrossARestart() throws {
            let directory = try Self.directory()
            let logger = Logger(label: "test")
            let before = DurableReceipts(directory: directory, logger: logger)
            #expect(
                before.take(1, from: PeerID(7)) && before.take(2, from: PeerID(7)) && before.take(5, from: PeerID(9)))
            #expect(!before.take(2, from: PeerID(7)), "a copy")
            let after = DurableReceipts(directory: directory, logger: logger)  // the process restarted
            #expect(!after.take(2, from: PeerID(7)) && !after.take(5, from: PeerID(9)))
            #expect(after.take(3, from: PeerID(7)) && after.take(6, from: PeerID(9)))
            let inMemory = DurableReceipts(directory: nil, logger: logger)
            #expect(inMemory.take(1, from: PeerID(7)) && !inMemory.take(1, from: PeerID(7)))
        }

        @Test("the log's file: a torn tail is cut off, what is whole is read back")
        func tornTail() throws {
            let path = try Self.directory() + "/" + DurableLog.fileName
            var records: [UInt8] = []
            DurableLogFile.append(.message, [7, 1], payload: ByteBuffer(string: "one").readableBytesView, to: &records)
            DurableLogFile.append(.message, [7, 2], payload: ByteBuffer(string: "two").readableBytesView, to: &records)
            DurableLogFile.append(.acknowledged, [7, 1], to: &records)
            let whole = records.count
            DurableLogFile.append(
                .message, [7, 3], payload: ByteBuffer(string: "three").readableBytesView, to: &records)
            try Data(records.dropLast(2)).write(to: URL(fileURLWithPath: path))
            let file = try DurableLogFile(path: path)
            let contents = try file.read()
            #expect(contents.messages.map(\.id) == [1, 2])
            #expect(contents.acknowledged[PeerID(7)] == 1)
            #expect(file.size == whole)
        }
    }
}
