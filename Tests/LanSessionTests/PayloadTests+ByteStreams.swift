import Crypto
import Foundation
import NIOCore
import Synchronization
import TestSupport
import Testing
import WireCodec

@testable import LanSession

extension PayloadTests {
    /// Byte streams over loopback: flow control, cancelling from either side, and taking them on demand.
    @Suite("Byte streams over loopback")
    struct ByteStreamTests {
        @Test("a byte stream with a slow reader: bytes in order, the writer held to the window")
        func slowReaderStream() async throws {
            let (a, b, _) = try await pair()
            let opened = Mutex<IncomingByteStream?>(nil)
            let recorder = EventRecorder(b)
            let writer = try await a.openStream(named: "numbers", to: b.peerID)
            #expect(
                await recorder.wait { events in
                    events.contains { if case .streamOpened = $0 { true } else { false } }
                })
            for case .streamOpened(let stream) in recorder.events { opened.withLock { $0 = stream } }
            let reader = try #require(opened.withLock { $0 })
            #expect(reader.name == "numbers" && reader.peer == a.peerID)
            let total = 4 << 20
            let written = Atomic<Int>(0)
            let consumed = Atomic<Int>(0)
            let maxAhead = Atomic<Int>(0)
            async let writing: Void = {
                var offset = 0
                while offset < total {
                    let count = min(64 << 10, total - offset)
                    try await writer.write((offset..<(offset + count)).map { UInt8(truncatingIfNeeded: $0 / 7) })
                    offset += count
                    written.store(offset, ordering: .relaxed)
                    let ahead = offset - consumed.load(ordering: .relaxed)
                    if ahead > maxAhead.load(ordering: .relaxed) { maxAhead.store(ahead, ordering: .relaxed) }
                }
                try await writer.finish()
            }()
            var received = 0
            var inOrder = true
            for try await chunk in reader {
                for (index, byte) in chunk.enumerated() where byte != UInt8(truncatingIfNeeded: (received + index) / 7)
                {
                    inOrder = false
                }
                received += chunk.count
                consumed.store(received, ordering: .relaxed)
                if received % (256 << 10) < chunk.count {
                    // A slow reader: it reads on once the writer ran ahead (its credit lets it by 3/4 of the window).
                    let ahead = min(total, received + Session.streamWindow / 4)
                    _ = await waitUntil(.seconds(5), every: .milliseconds(1)) {
                        written.load(ordering: .relaxed) >= ahead
                    }
                }
            }
            try await writing
            #expect(received == total)
            #expect(inOrder)
            #expect(
                maxAhead.load(ordering: .relaxed) <= Session.streamWindow + (64 << 10) + (32 << 10),
                "the writer ran \(maxAhead.load(ordering: .relaxed)) bytes ahead of the reader")
            await stopAll([a, b])
        }

        @Test("a byte stream cancelled by its reader fails the writer, and by its writer fails the reader")
        func streamCancel() async throws {
            let (a, b, _) = try await pair()
            let recorder = EventRecorder(b)
            let first = try await a.openStream(named: "first", to: b.peerID)
            let second = try await a.openStream(named: "second", to: b.peerID)
            #expect(await recorder.wait { $0.filter { if case .streamOpened = $0 { true } else { false } }.count == 2 })
            var streams: [String: IncomingByteStream] = [:]
            for case .streamOpened(let stream) in recorder.events { streams[stream.name] = stream }
            await streams["first"]?.cancel(reason: "enough")
            let failed = await waitUntil { () async -> Bool in
                do throws(SessionError) {
                    try await first.write([UInt8](repeating: 0, count: 1 << 20))
                    return false
                } catch {
                    return error.code == .cancelled && error.message.contains("enough")
                }
            }
            #expect(failed, "the writer learns that the reader cancelled")
            try await second.write([1, 2, 3])
            let reader = try #require(streams["second"])
            #expect(try await reader.read() == [1, 2, 3])
            await second.cancel(reason: "changed my mind")
            do {
                let more = try await reader.read()
                Issue.record("the stream went on after its writer cancelled: \(String(describing: more))")
            } catch {
                #expect(error.code == .cancelled && error.message.contains("changed my mind"), "\(error)")
            }
            await stopAll([a, b])
        }

        @Test("a session that takes no byte streams declines them, until it is told to take them")
        func byteStreamsTakenOnDemand() async throws {
            let a = try makeSession(1)
            let b = try makeSession(2) { $0.acceptsByteStreams = false }
            try await mesh([a, b])
            #expect(try await waitUntil { try await a.connectedPeers().count == 1 })
            do {
                _ = try await a.openStream(named: "refused", to: b.peerID)
                Issue.record("a stream was taken by a session that takes none")
            } catch {
                #expect(error.code == .declined, "\(error)")
            }
            try await b.acceptByteStreams(true)
            let stream = try await a.openStream(named: "taken", to: b.peerID)
            try await stream.finish()
            await stopAll([a, b])
        }
    }
}
