import Testing
import WireCodec

@testable import LanSession

/// What an application may send through its context: its own kinds and appMessages, never the session's own.
@Suite("ApplicationContext")
struct ApplicationContextTests {
    /// One message of each of the session's own kinds.
    static let sessionMessages: [Message] = [
        .hello(Hello(peerID: PeerID(9), displayName: "x", sessionName: "s")), .accept(Accept(linkToken: 1)),
        .decline(.full), .invitation(Invitation()), .ping(Ping(nonce: 1, timestamp: 1)),
        .pong(Ping(nonce: 1, timestamp: 1)), .bye(.leaving), .ack(sequence: 1),
        .resume(Resume(received: 0, nextSequence: 1)), .members([]), .noise([1]), .trust([]), .pairing(.request),
        .data([1]), .streamOpen(StreamOpen(id: 1, kind: .bytes, name: "s")),
        .streamChunk(StreamChunk(id: 1, offset: 0, bytes: [1])),
        .streamCredit(StreamCredit(id: 1, received: 0, limit: 1)),
        .streamEnd(StreamEnd(id: 1, fromOpener: true, status: .cancelled)),
    ]

    @Test(
        "every send refuses the session's own kinds with invalidArgument, whoever it goes to",
        arguments: sessionMessages)
    func refusesSessionKinds(message: Message) throws {
        let embedded = try EmbeddedCore()
        let context: any ApplicationContext = embedded.core
        #expect(
            Self.refusal { () throws(SessionError) in try context.sendReliably(message, to: PeerID(2)) }
                == .invalidArgument)
        #expect(
            Self.refusal { () throws(SessionError) in try context.sendReliablyToMembers(message) } == .invalidArgument)
        #expect(
            Self.refusal { () throws(SessionError) in try context.sendToConnectedPeers(message, reliably: true) }
                == .invalidArgument)
        #expect(
            Self.refusal { () throws(SessionError) in try context.sendToConnectedPeers(message, reliably: false) }
                == .invalidArgument)
    }

    /// The code `send` is refused with; nil when it is taken.
    static func refusal(_ send: () throws(SessionError) -> Void) -> SessionError.Code? {
        do {
            try send()
            return nil
        } catch {
            return error.code
        }
    }

    @Test("an application's own kinds and appMessages are taken")
    func takesApplicationKinds() throws {
        let embedded = try EmbeddedCore()
        let context: any ApplicationContext = embedded.core
        for message in [
            Message.application(ApplicationMessage(kind: 0x20, body: [])),
            .application(ApplicationMessage(kind: 0x29, body: [1, 2])), .appMessage(AppMessage(app: 1, bytes: [1])),
        ] {
            try context.sendReliably(message, to: PeerID(2))
            try context.sendReliablyToMembers(message)
            try context.sendToConnectedPeers(message, reliably: false)
        }
    }
}
