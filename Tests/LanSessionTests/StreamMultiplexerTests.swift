import Foundation
import Logging
import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// Data, streams and resources with a fake session: what leaves for each peer, and when.
@Suite("StreamMultiplexer")
struct StreamMultiplexerTests {
    /// Plays the session: records what is sent, with a reliable channel whose room and unacknowledged bytes the test
    /// sets.
    final class FakeSession: StreamMultiplexerDelegate {
        var sent: [(message: Message, peer: PeerID)] = []
        var sentData: [(payload: [UInt8], peer: PeerID)] = []
        var room = true
        /// Messages that still fit when set; `room` says it otherwise.
        var roomForMessages: Int?
        var unacknowledged = 0
        var events: [SessionEvent] = []
        var opened: [(peer: PeerID, name: String, id: UInt32)] = []

        func sendSequenced(_ message: Message, to peer: PeerID) { sent.append((message, peer)) }
        func sendSequenced(_ message: Message, to peer: PeerID, ifRoomBeyond bytes: Int, messages: Int) -> Bool {
            guard room else { return false }
            sendSequenced(message, to: peer)
            return true
        }
        func sendData(_ payload: ByteBuffer, to peer: PeerID, ifRoomBeyond bytes: Int, messages: Int) -> Bool {
            if let left = roomForMessages {
                guard left > 0 else { return false }
                roomForMessages = left - 1
            }
            guard room else { return false }
            sentData.append((Array(payload.readableBytesView), peer))
            return true
        }
        func unacknowledgedBytes(to peer: PeerID) -> Int { unacknowledged }
        func name(of peer: PeerID) -> String { "peer \(peer.rawValue)" }
        func emit(_ event: SessionEvent) { events.append(event) }
        func byteStreamOpened(from peer: PeerID, name: String, id: UInt32) { opened.append((peer, name, id)) }

        var kinds: [MessageKind] { sent.map(\.message.kind) }
    }

    let loop = EmbeddedEventLoop()
    let peer = PeerID(2)

    func multiplexer(_ session: FakeSession, inbox: String? = nil, byteStreams: Bool = true) -> StreamMultiplexer {
        let multiplexer = StreamMultiplexer(
            loop: loop, logger: Logger(label: "test"), inbox: inbox.map { Inbox(directory: $0, gate: nil) },
            acceptsByteStreams: byteStreams)
        multiplexer.delegate = session
        return multiplexer
    }

    @Test("data waits for room on the reliable channel, in order, and is never dropped")
    func dataWaitsForRoom() throws {
        let session = FakeSession()
        let multiplexer = multiplexer(session)
        #expect(multiplexer.sendData([ByteBuffer(bytes: [1])], to: peer) == nil, "room: sent at once")
        session.room = false
        let waiting = try #require(multiplexer.sendData([ByteBuffer(bytes: [2])], to: peer))
        session.room = true
        #expect(multiplexer.sendData([ByteBuffer(bytes: [3])], to: peer) != nil, "behind what waits, even with room")
        #expect(session.sentData.map(\.payload) == [[1]])
        multiplexer.roomFreed(for: peer)
        #expect(session.sentData.map(\.payload) == [[1], [2], [3]])
        try waiting.wait()
    }

    @Test("a byte stream sends within the receiver's credit and under the bulk limit, after waiting data")
    func creditAndBulk() throws {
        let session = FakeSession()
        let multiplexer = multiplexer(session)
        let opened = multiplexer.open(to: peer, kind: .bytes, name: "s", size: 0, resumeKey: [])
        guard case .streamOpen(let open) = session.sent.last?.message else {
            Issue.record("no streamOpen")
            return
        }
        multiplexer.received(.streamCredit(StreamCredit(id: open.id, received: 0, limit: 100_000)), from: peer)
        let (id, from) = try opened.wait()
        #expect(id == open.id && from == 0)
        let key = StreamKey(peer: peer, id: id)
        let written = multiplexer.write(key, [[UInt8](repeating: 1, count: 150_000)])
        let chunks = session.sent.compactMap { if case .streamChunk(let c) = $0.message { c } else { nil } }
        #expect(chunks.map(\.bytes.count) == [StreamMultiplexer.chunkSize, 100_000 - StreamMultiplexer.chunkSize])
        session.unacknowledged = StreamMultiplexer.bulkLimit
        multiplexer.received(.streamCredit(StreamCredit(id: id, received: 0, limit: 200_000)), from: peer)
        #expect(session.kinds.filter { $0 == .streamChunk }.count == 2, "the bulk limit holds the rest")
        session.unacknowledged = 0
        multiplexer.roomFreed(for: peer)
        #expect(session.kinds.filter { $0 == .streamChunk }.count == 3)
        try written.wait()
        try multiplexer.finish(key, digest: []).wait()
        #expect(session.sent.last?.message == .streamEnd(StreamEnd(id: id, fromOpener: true, status: .finished)))
    }

    @Test("a batch goes as far as there is room; the rest waits, in order, behind one promise that the last completes")
    func batchWaitsForRoom() throws {
        let session = FakeSession()
        let multiplexer = multiplexer(session)
        session.roomForMessages = 2
        let batch = (1...4).map { ByteBuffer(bytes: [UInt8($0)]) }
        let waiting = try #require(multiplexer.sendData(batch, to: peer))
        #expect(session.sentData.map(\.payload) == [[1], [2]])
        var done = false
        waiting.assumeIsolated().whenSuccess { done = true }
        session.roomForMessages = 1
        multiplexer.roomFreed(for: peer)
        #expect(session.sentData.map(\.payload) == [[1], [2], [3]])
        #expect(!done, "not before the last message of the batch is on the channel")
        session.roomForMessages = nil
        multiplexer.roomFreed(for: peer)
        #expect(session.sentData.map(\.payload) == [[1], [2], [3], [4]])
        #expect(done)
    }

    @Test("a peer that goes fails its streams and what waits for room")
    func peerGone() {
        let session = FakeSession()
        let multiplexer = multiplexer(session)
        session.room = false
        let waiting = multiplexer.sendData([ByteBuffer(bytes: [1])], to: peer)
        let opened = multiplexer.open(to: peer, kind: .bytes, name: "s", size: 0, resumeKey: [])
        multiplexer.peerGone(peer, reason: "it left")
        #expect(throws: SessionError.self) { try waiting?.wait() }
        #expect(throws: SessionError.self) { try opened.wait() }
    }

    @Test("streams it takes no part of are declined: bytes when not taken, resources without an inbox or a file name")
    func declines() throws {
        let session = FakeSession()
        let noBytes = multiplexer(session, byteStreams: false)
        noBytes.received(.streamOpen(StreamOpen(id: 1, kind: .bytes, name: "s", size: 0, resumeKey: [])), from: peer)
        #expect(session.sent.last?.message.kind == .streamEnd)
        noBytes.received(
            .streamOpen(
                StreamOpen(
                    id: 2, kind: .resource, name: "a.bin", size: 1,
                    resumeKey: [UInt8](repeating: 0, count: Wire.resumeKeyLength))), from: peer)
        guard case .streamEnd(let end) = session.sent.last?.message else {
            Issue.record("the resource was not declined")
            return
        }
        #expect(end.status == .declined && end.reason.contains("inbox"))
        let inbox = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)").path
        let withInbox = multiplexer(session, inbox: inbox)
        withInbox.received(
            .streamOpen(
                StreamOpen(
                    id: 3, kind: .resource, name: "..", size: 1,
                    resumeKey: [UInt8](repeating: 0, count: Wire.resumeKeyLength))), from: peer)
        guard case .streamEnd(let refused) = session.sent.last?.message else {
            Issue.record("\"..\" was taken as a file name")
            return
        }
        #expect(refused.status == .declined && refused.id == 3)
        withInbox.received(
            .streamOpen(StreamOpen(id: 4, kind: .bytes, name: "s", size: 0, resumeKey: [])), from: peer)
        #expect(session.opened.map(\.id) == [4])
        #expect(session.sent.last?.message == .streamCredit(StreamCredit(id: 4, received: 0, limit: 256 << 10)))
    }

    @Test("a resource whose name is no file name is declined, never stored under a part of its name (section 10.3)")
    func pathsDeclined() throws {
        for name in ["../x", "dir/x", "x/", "/x", ".", "..", "", "a\u{0}b", ".partial-x"] {
            #expect(Inbox.safeFileName(name) == nil, "\(name) was taken as a file name")
        }
        for name in ["x", "a.txt", "..x", "x..", ".hidden", "a b (2).txt"] {
            #expect(Inbox.safeFileName(name) == name)
        }
        let session = FakeSession()
        let inbox = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)").path
        let withInbox = multiplexer(session, inbox: inbox)
        for (id, name) in zip(UInt32(1)..., ["../x", "dir/x"]) {
            withInbox.received(
                .streamOpen(
                    StreamOpen(
                        id: id, kind: .resource, name: name, size: 1,
                        resumeKey: [UInt8](repeating: 0, count: Wire.resumeKeyLength))), from: peer)
            guard case .streamEnd(let end) = session.sent.last?.message else {
                Issue.record("\(name) was not declined")
                continue
            }
            #expect(end.id == id && end.status == .declined && !end.fromOpener)
        }
    }

    @Test("a chunk out of place ends the stream as failed; the reader learns why")
    func chunkOutOfPlace() {
        let session = FakeSession()
        let multiplexer = multiplexer(session)
        multiplexer.received(
            .streamOpen(StreamOpen(id: 1, kind: .bytes, name: "s", size: 0, resumeKey: [])), from: peer)
        let key = StreamKey(peer: peer, id: 1)
        let read = multiplexer.read(key)
        multiplexer.received(.streamChunk(StreamChunk(id: 1, offset: 10, bytes: [1])), from: peer)
        guard case .streamEnd(let end) = session.sent.last?.message else {
            Issue.record("no streamEnd")
            return
        }
        #expect(end.status == .failed && !end.fromOpener)
        #expect(throws: SessionError.self) { try read.wait() }
    }
}
