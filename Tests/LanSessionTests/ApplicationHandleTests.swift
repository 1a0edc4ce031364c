import LanSession
import NIOCore
import TestSupport
import Testing
import WireCodec

/// An application of its own inside sessions on loopback, through the public seam only: its messages by number, the
/// session's calls, a handle that runs on the session's loop.
@Suite("Applications over loopback", .serialized)
struct ApplicationHandleTests {
    func session(_ id: UInt64) async throws -> (Session, ApplicationHandle<MessageRecorder>) {
        let session = try makeSession(id)
        let handle = try await session.addApplication { MessageRecorder(numbers: [7], context: $0) }
        return (session, handle)
    }

    /// A message of kind 0x22, an application's own (the original apps' `negotiateConfirm` of player index 3).
    static let confirm = Message.application(ApplicationMessage(kind: 0x22, body: [3]))

    func appMessages(_ handle: ApplicationHandle<MessageRecorder>) async throws -> [Message] {
        try await handle.call { $0.messages }
    }

    @Test("messages of its number go both ways, reliably and not; it hears of peers coming and going")
    func messagesAndCalls() async throws {
        let (a, appA) = try await session(1)
        let (b, appB) = try await session(2)
        #expect(try await connectedMesh([a, b]))
        #expect(try await waitUntil { try await a.peers().first?.unreliable == .udp })
        try await appA.call { app throws(SessionError) in
            try app.context?.sendReliablyToMembers(.appMessage(AppMessage(app: 7, bytes: [1])))
        }
        try await appA.call { app throws(SessionError) in
            try app.context?.sendToConnectedPeers(.appMessage(AppMessage(app: 7, bytes: [2])), reliably: false)
        }
        #expect(try await waitUntil { try await appMessages(appB).count == 2 })
        let calls = try await appB.call { $0.calls }
        #expect(calls.contains(.peerConnected(PeerID(1))))
        #expect(calls.contains(.received(.appMessage(AppMessage(app: 7, bytes: [1])), from: PeerID(1), reliably: true)))
        #expect(
            calls.contains(.received(.appMessage(AppMessage(app: 7, bytes: [2])), from: PeerID(1), reliably: false)))
        await a.stop()
        #expect(
            try await waitUntil {
                try await appB.call { $0.calls.filter { $0 == .membershipChanged }.count } >= 2
            }, "connected, then gone")
        await b.stop()
        await #expect(throws: SessionError.self) { _ = try await appB.call { $0.calls } }
    }

    @Test("an application's own kind sent unreliably travels in a datagram and reaches the application that takes it")
    func ownKindByDatagram() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        let appA = try await a.addApplication { MessageRecorder(kinds: [0x22], context: $0) }
        let appB = try await b.addApplication { MessageRecorder(kinds: [0x22], context: $0) }
        #expect(try await connectedMesh([a, b]))
        #expect(try await waitUntil { try await a.peers().first?.unreliable == .udp })
        try await appA.call { app throws(SessionError) in
            try app.context?.sendToConnectedPeers(Self.confirm, reliably: false)
        }
        #expect(try await waitUntil { try await appB.call { $0.messages.count } == 1 })
        let calls = try await appB.call { $0.calls }
        #expect(calls.contains(.received(Self.confirm, from: PeerID(1), reliably: false)))
        await stopAll([a, b])
    }

    @Test("an unreliable message too large for a datagram goes on the reliable channel rather than nowhere")
    func tooLargeForADatagram() async throws {
        let (a, appA) = try await session(1)
        let (b, appB) = try await session(2)
        #expect(try await connectedMesh([a, b]))
        #expect(try await waitUntil { try await a.peers().first?.unreliable == .udp })
        let large = [UInt8](repeating: 9, count: Wire.maxDatagramLength)
        try await appA.call { app throws(SessionError) in
            try app.context?.sendToConnectedPeers(.appMessage(AppMessage(app: 7, bytes: large)), reliably: false)
        }
        #expect(try await waitUntil { try await appMessages(appB).count == 1 })
        let calls = try await appB.call { $0.calls }
        #expect(
            calls.contains(.received(.appMessage(AppMessage(app: 7, bytes: large)), from: PeerID(1), reliably: true)))
        await stopAll([a, b])
    }

    @Test("an appMessage goes only to peers that announce them; other messages still reach those")
    func capability() async throws {
        let (session, app) = try await session(1)
        let events = EventRecorder(session)
        let port = try await session.start()
        let raw = try RawPeer(port: port)
        try raw.send(.hello(Hello(peerID: PeerID(77), incarnation: 1, displayName: "old", sessionName: "test")))
        try raw.send(.invitation(Invitation()))
        while let message = raw.receive() { if case .resume = message { break } }
        try raw.send(.resume(Resume(received: 0, nextSequence: 1)))
        #expect(await events.wait { $0.contains(.peerConnected(PeerID(77), name: "old")) })
        try await app.call { app throws(SessionError) in
            try app.context?.sendReliablyToMembers(.appMessage(AppMessage(app: 7, bytes: [1])))
        }
        try await session.send([9], to: [PeerID(77)])
        var received: [Message] = []
        while let message = raw.receive(timeout: .milliseconds(500)) {
            received.append(message)
            if case .data = message { break }
        }
        #expect(received.contains(.data([9])))
        #expect(!received.contains { $0.kind == .appMessage }, "the old peer would have closed the link on it")
        await session.stop()
    }

    @Test("a peer that restarts before its old link is seen to close is greeted again, as a newcomer")
    func restartedPeerGreetedAgain() async throws {
        let (session, app) = try await session(1)
        let events = EventRecorder(session)
        let port = try await session.start()
        func join(incarnation: UInt64) throws -> RawPeer {
            let raw = try RawPeer(port: port)
            try raw.send(
                .hello(Hello(peerID: PeerID(77), incarnation: incarnation, displayName: "raw", sessionName: "test")))
            try raw.send(.invitation(Invitation()))
            while let message = raw.receive() { if case .resume = message { break } }
            try raw.send(.resume(Resume(received: 0, nextSequence: 1)))
            return raw
        }
        let first = try join(incarnation: 1)
        #expect(await events.wait { $0.contains(.peerConnected(PeerID(77), name: "raw")) })
        let second = try join(incarnation: 2)  // the first link is still open: the session learns of it from this hello
        let greeted = await waitUntil {
            (try? await app.call { $0.calls.filter { $0 == .peerConnected(PeerID(77)) }.count }) == 2
        }
        #expect(greeted, "what a newcomer is sent, sent again to the new incarnation")
        let calls = try await app.call { $0.calls }
        #expect(calls.contains(.peerRestarted(PeerID(77))))
        _ = first
        _ = second
        await session.stop()
    }
}
