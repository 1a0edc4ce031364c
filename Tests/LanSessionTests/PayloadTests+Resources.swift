import Crypto
import Foundation
import NIOCore
import Synchronization
import TestSupport
import Testing
import WireCodec

@testable import LanSession

extension PayloadTests {
    /// Resources over loopback: files verified in the inbox, resumed, cancelled, declined, and partial files swept.
    @Suite("Resources over loopback")
    struct ResourceTests {
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
                sent.events.contains {
                    if case .transfer(let p) = $0, p.id.direction == .sending { true } else { false }
                })
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
            // The receiver ended the first attempt as failed, at the bye or (when the bye was stuck behind the chunks
            // the sender's socket still held) when the peer came back restarted, and kept its partial file.
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
            #expect(
                error?.code == .cancelled && error?.message.contains("not now") == true, "\(String(describing: error))")
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

        @Test(
            "partial files older than their lifetime leave the inbox when a session starts; younger ones and files stay"
        )
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
    }
}
