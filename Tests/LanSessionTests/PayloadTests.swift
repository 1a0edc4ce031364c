import Crypto
import Foundation
import NIOCore
import Synchronization
import TestSupport
import Testing
import WireCodec

@testable import LanSession

/// Applications' payloads over loopback: data, byte streams and resources, and events for many readers.
@Suite("Data, streams and resources over loopback", .serialized)
struct PayloadTests {
    /// Two connected sessions; `b` takes resources into a fresh inbox, its writes held where `gate` says.
    func pair(inbox: Bool = true, gate: InboxGate? = nil) async throws -> (Session, Session, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let a = try makeSession(1)
        let b = try makeSession(2, inbox: inbox ? directory.path : nil) { $0.inboxGate = gate }
        try await mesh([a, b])
        #expect(
            try await waitUntil {
                let fromA = try await a.connectedPeers().count
                let fromB = try await b.connectedPeers().count
                return fromA == 1 && fromB == 1
            })
        return (a, b, directory.path)
    }

    func payloads(_ events: [SessionEvent]) -> [[UInt8]] {
        events.compactMap { if case .data(_, let bytes, true) = $0 { Array(bytes.readableBytesView) } else { nil } }
    }

    func file(size: Int, seed: UInt64) throws -> (path: String, sha256: String) {
        var generator = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 8) {
            var value = generator.next()
            for offset in index..<min(index + 8, size) {
                bytes[offset] = UInt8(truncatingIfNeeded: value)
                value >>= 8
            }
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("payload-\(UUID().uuidString).bin")
        try Data(bytes).write(to: path)
        return (path.path, SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
    }

    func sha256(of path: String) throws -> String {
        SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path))).map { String(format: "%02x", $0) }.joined()
    }

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
            for (index, byte) in chunk.enumerated() where byte != UInt8(truncatingIfNeeded: (received + index) / 7) {
                inOrder = false
            }
            received += chunk.count
            consumed.store(received, ordering: .relaxed)
            if received % (256 << 10) < chunk.count {
                // A slow reader: it reads on once the writer ran ahead (its credit lets it by 3/4 of the window).
                let ahead = min(total, received + Session.streamWindow / 4)
                _ = await waitUntil(.seconds(5), every: .milliseconds(1)) { written.load(ordering: .relaxed) >= ahead }
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

    @Test("a file arrives verified in the inbox, with progress on both sides")
    func resource() async throws {
        let (a, b, inbox) = try await pair()
        let sent = EventRecorder(a)
        let received = EventRecorder(b)
        let (path, digest) = try file(size: 5_000_000, seed: 1)
        let updates = Mutex<[TransferProgress]>([])
        let result = try await a.sendResource(at: path, named: "five.bin", to: b.peerID) { progress in
            updates.withLock { $0.append(progress) }
        }
        #expect(result.phase == .finished(path: nil, sha256: digest))
        #expect(updates.withLock { $0.first?.phase } == .started)
        let landed = await received.wait { events in
            events.contains { if case .transfer(let p) = $0, case .finished = p.phase { true } else { false } }
        }
        #expect(landed)
        #expect(try sha256(of: "\(inbox)/five.bin") == digest)
        #expect(try FileManager.default.contentsOfDirectory(atPath: inbox) == ["five.bin"], "no partial file left")
        #expect(
            sent.events.contains { if case .transfer(let p) = $0, p.id.direction == .sending { true } else { false } })
        // A second file of the same name does not overwrite the first.
        try await a.sendResource(at: path, named: "five.bin", to: b.peerID)
        #expect(try sha256(of: "\(inbox)/five (2).bin") == digest)
        await stopAll([a, b])
    }

    @Test("a file transfer survives a link cut, and resumes from the partial file after the sender restarted")
    func resourceInterruptedAndResumed() async throws {
        // The receiver's disk is held at 5 MB, then at 10 MB: the transfer is surely under way when the link is cut
        // and when the sender stops, however fast the machine.
        let gate = InboxGate()
        let (a, b, inbox) = try await pair(gate: gate)
        let (path, digest) = try file(size: 40_000_000, seed: 2)
        // A link cut: the reliable channel resends what was in flight; the transfer goes on.
        gate.hold(from: 5_000_000)
        async let cutTransfer = a.sendResource(at: path, named: "cut.bin", to: b.peerID)
        #expect(await waitUntil(.seconds(20)) { gate.isHolding }, "the receiver reached 5 MB")
        try await a.dropLink(to: b.peerID)
        gate.release()
        let result = try await cutTransfer
        #expect(result.phase == .finished(path: nil, sha256: digest))
        #expect(try sha256(of: "\(inbox)/cut.bin") == digest)

        // The sender stops half-way (as a daemon that is shut down); restarted with the same peer id and pushing
        // the same file again, it sends only the rest.
        let receiving = EventRecorder(b)
        gate.hold(from: 10_000_000)
        async let attempt: SessionError? = {
            do throws(SessionError) {
                try await a.sendResource(at: path, named: "again.bin", to: b.peerID)
                return nil
            } catch {
                return error
            }
        }()
        #expect(await waitUntil(.seconds(20)) { gate.isHolding }, "the receiver reached 10 MB")
        await a.stop()
        let failure = await attempt
        #expect(failure != nil, "the first attempt failed with the session")
        gate.release()
        let restarted = try makeSession(1)
        try await restarted.start()
        try await restarted.connect(to: await b.endpoint)
        #expect(try await waitUntil { try await restarted.connectedPeers().count == 1 })
        // The receiver ended the first attempt as failed, at the bye or (when the bye was stuck behind the chunks the
        // sender's socket still held) when the peer came back restarted, and kept its partial file.
        #expect(
            await receiving.wait { events in
                events.contains { if case .transfer(let p) = $0, case .failed = p.phase { true } else { false } }
            })
        let resumed = try await restarted.sendResource(at: path, named: "again.bin", to: b.peerID)
        #expect(resumed.resumedFrom >= 10_000_000, "resumed at \(resumed.resumedFrom)")
        #expect(resumed.phase == .finished(path: nil, sha256: digest))
        #expect(try sha256(of: "\(inbox)/again.bin") == digest)
        await stopAll([restarted, b])
    }

    @Test("a transfer cancelled by the receiver fails the sender; one cancelled by the sender ends on the receiver")
    func resourceCancelled() async throws {
        // The receiver's disk is held at 1 MB: each transfer is surely under way when it is cancelled.
        let gate = InboxGate()
        let (a, b, inbox) = try await pair(gate: gate)
        let (path, _) = try file(size: 40_000_000, seed: 3)
        let receiving = EventRecorder(b)
        gate.hold(from: 1_000_000)
        async let first: SessionError? = {
            do throws(SessionError) {
                try await a.sendResource(at: path, named: "first.bin", to: b.peerID)
                return nil
            } catch {
                return error
            }
        }()
        #expect(await waitUntil(.seconds(20)) { gate.isHolding }, "the receiver reached 1 MB")
        let id = try #require(try await b.transfers().first?.id)
        #expect(id.direction == .receiving)
        try await b.cancelTransfer(id, reason: "not now")
        gate.release()
        let error = await first
        #expect(error?.code == .cancelled && error?.message.contains("not now") == true, "\(String(describing: error))")
        #expect(
            try await waitUntil { try FileManager.default.contentsOfDirectory(atPath: inbox).isEmpty },
            "the partial file is removed")

        gate.hold(from: 1_000_000)
        let sender = Task { try await a.sendResource(at: path, named: "second.bin", to: b.peerID) }
        #expect(await waitUntil(.seconds(20)) { gate.isHolding }, "the receiver reached 1 MB")
        sender.cancel()
        gate.release()
        #expect(
            await receiving.wait { events in
                events.contains {
                    if case .transfer(let p) = $0, p.name == "second.bin", case .cancelled(true, _) = p.phase {
                        true
                    } else {
                        false
                    }
                }
            })
        #expect(try await b.transfers().isEmpty)
        await stopAll([a, b])
    }

    @Test("a peer without an inbox declines resources")
    func noInbox() async throws {
        let (a, b, _) = try await pair(inbox: false)
        let (path, _) = try file(size: 1000, seed: 4)
        do {
            try await a.sendResource(at: path, to: b.peerID)
            Issue.record("a peer without an inbox took a resource")
        } catch {
            #expect(error.code == .declined)
            #expect(error.message.contains("inbox"))
        }
        await stopAll([a, b])
    }

    @Test("for a member away past the delivery timeout, waiting data and transfers fail; what was sent arrives later")
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

    @Test("partial files older than their lifetime leave the inbox when a session starts; younger ones and files stay")
    func stalePartialFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let names = [".partial-1-old", ".partial-2-young", "old-but-complete.bin"]
        for name in names {
            try Data([1, 2, 3]).write(to: directory.appendingPathComponent(name))
        }
        let tenDaysAgo = Date().addingTimeInterval(-10 * 24 * 3600)
        for name in [names[0], names[2]] {
            try FileManager.default.setAttributes(
                [.modificationDate: tenDaysAgo], ofItemAtPath: directory.appendingPathComponent(name).path)
        }
        let session = try makeSession(1, inbox: directory.path) { $0.partialFileLifetime = .seconds(7 * 24 * 3600) }
        try await session.start()
        let gone = await waitUntil {
            !FileManager.default.fileExists(atPath: directory.appendingPathComponent(names[0]).path)
        }
        #expect(gone)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == [names[1], names[2]])
        await stopAll([session])
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
