import Foundation
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing
import WireCodec

@testable import LanSession

/// How streams end (docs/wire-format.md, sections 10.2 and 10.3): a byte stream's `finished` and what follows it, and
/// the partial file of a resource that did not arrive whole.
@Suite("The end of streams")
struct StreamEndTests {
    typealias FakeSession = StreamMultiplexerTests.FakeSession

    let peer = PeerID(2)

    @Test("a byte stream ends with the opener's finished: no digest, no answer; what follows is ignored")
    func byteStreamEnd() throws {
        let loop = EmbeddedEventLoop()
        let (opener, receiver) = (FakeSession(), FakeSession())
        let sending = StreamMultiplexer(loop: loop, logger: Logger(label: "test"), inbox: nil, acceptsByteStreams: true)
        let reading = StreamMultiplexer(loop: loop, logger: Logger(label: "test"), inbox: nil, acceptsByteStreams: true)
        sending.delegate = opener
        reading.delegate = receiver
        let opened = sending.open(to: peer, kind: .bytes, name: "s", size: 0, resumeKey: [])
        guard case .streamOpen(let open) = opener.sent.last?.message else {
            Issue.record("no streamOpen")
            return
        }
        reading.received(.streamOpen(open), from: peer)
        guard case .streamCredit(let credit) = receiver.sent.last?.message else {
            Issue.record("no first credit")
            return
        }
        sending.received(.streamCredit(credit), from: peer)
        let key = StreamKey(peer: peer, id: try opened.wait().0)
        try sending.write(key, [[1, 2, 3]]).wait()
        try sending.finish(key, digest: []).wait()
        #expect(opener.sent.last?.message == .streamEnd(StreamEnd(id: key.id, fromOpener: true, status: .finished)))
        for message in opener.sent.map(\.message) where [.streamChunk, .streamEnd].contains(message.kind) {
            reading.received(message, from: peer)
        }
        #expect(try reading.read(key).wait() == [1, 2, 3])
        #expect(try reading.read(key).wait() == nil)
        #expect(!receiver.kinds.contains(.streamEnd), "a byte stream's finished is answered")
        // Over on the opener's side: a streamEnd from the receiver changes nothing and is not answered.
        let sent = opener.sent.count
        sending.received(.streamEnd(StreamEnd(id: key.id, fromOpener: false, status: .cancelled)), from: peer)
        #expect(opener.sent.count == sent && opener.events.isEmpty)
        // A digest on a byte stream's finished is ignored: the stream ends as well.
        let other = StreamKey(peer: peer, id: 9)
        reading.received(.streamOpen(StreamOpen(id: 9, kind: .bytes, name: "t", size: 0, resumeKey: [])), from: peer)
        reading.received(.streamChunk(StreamChunk(id: 9, offset: 0, bytes: [4])), from: peer)
        let digest = [UInt8](repeating: 7, count: Wire.digestLength)
        reading.received(
            .streamEnd(StreamEnd(id: 9, fromOpener: true, status: .finished, digest: digest)), from: peer)
        #expect(try reading.read(other).wait() == [4])
        #expect(try reading.read(other).wait() == nil)
        #expect(!receiver.kinds.contains(.streamEnd))
    }

    @Test("a resource failed on the receiver keeps its partial file for the next attempt; a bad digest removes it")
    func partialFileAfterAFailure() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let inbox = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: inbox) }
        let (peer, resumeKey) = (self.peer, [UInt8](repeating: 9, count: Wire.resumeKeyLength))
        let partial = "\(inbox)/.partial-\(peer)-\(resumeKey.hexString)"
        let bound = try await loop.submit {
            let multiplexer = StreamMultiplexer(
                loop: loop, logger: Logger(label: "test"), inbox: Inbox(directory: inbox, gate: nil),
                acceptsByteStreams: true)
            let session = FakeSession()
            multiplexer.delegate = session
            return NIOLoopBound((session: session, multiplexer: multiplexer), eventLoop: loop)
        }.get()
        func receive(_ message: Message) async throws {
            try await loop.submit { bound.value.multiplexer.received(message, from: peer) }.get()
        }
        func lastSent() async throws -> Message? {
            try await loop.submit { bound.value.session.sent.last?.message }.get()
        }
        func size() -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: partial))?[.size] as? Int
        }
        func open(_ id: UInt32) async throws -> StreamCredit? {
            try await receive(
                .streamOpen(StreamOpen(id: id, kind: .resource, name: "a.bin", size: 10, resumeKey: resumeKey)))
            guard
                await eventually({
                    if case .streamCredit(let credit)? = try await lastSent(), credit.id == id { return true }
                    return false
                }), case .streamCredit(let credit)? = try await lastSent()
            else { return nil }
            return credit
        }

        #expect(try await open(1)?.received == 0)
        try await receive(.streamChunk(StreamChunk(id: 1, offset: 0, bytes: [1, 2, 3, 4])))
        #expect(await eventually { size() == 4 })
        // A chunk out of place: failed on the receiver's side; what is on disk stays.
        try await receive(.streamChunk(StreamChunk(id: 1, offset: 7, bytes: [8])))
        guard case .streamEnd(let failed)? = try await lastSent() else {
            Issue.record("the stream did not fail")
            return
        }
        #expect(failed.status == .failed && !failed.fromOpener)
        #expect(size() == 4, "the partial file went with the failure")
        // The opener sends the resource again: the receiver resumes at what it holds.
        #expect(try await open(2)?.received == 4)
        try await receive(.streamChunk(StreamChunk(id: 2, offset: 4, bytes: [5, 6, 7, 8, 9, 10])))
        #expect(await eventually { size() == 10 })
        // A digest that does not match: failed, and the partial file is removed.
        let wrong = [UInt8](repeating: 0, count: Wire.digestLength)
        try await receive(.streamEnd(StreamEnd(id: 2, fromOpener: true, status: .finished, digest: wrong)))
        #expect(await eventually { size() == nil })
        guard case .streamEnd(let mismatch)? = try await lastSent() else {
            Issue.record("the mismatch was not told")
            return
        }
        #expect(mismatch.status == .failed && mismatch.id == 2)
    }

    /// Whether `condition` holds within a few seconds, asked every 2 ms (file work runs on the file threads).
    func eventually(_ condition: () async throws -> Bool) async -> Bool {
        for _ in 0..<2_500 {
            if (try? await condition()) == true { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return false
    }
}
