import TestSupport
import Testing
import WireCodec

@testable import LanSession

/// Which application takes which message.
@Suite("ApplicationRouter")
struct ApplicationRouterTests {
    @Test("each message goes to the application of its kind, an appMessage to the one of its number")
    func routes() throws {
        var router = ApplicationRouter()
        let counter = MessageRecorder(kinds: [0x27, 0x28])
        let chat = MessageRecorder(numbers: [7])
        try router.add(counter)
        try router.add(chat)
        #expect(router.application(for: .counterIncrement(count: 1)) === counter)
        #expect(router.application(for: .appMessage(AppMessage(app: 7, bytes: []))) === chat)
        #expect(router.application(for: .appMessage(AppMessage(app: 8, bytes: []))) == nil)
        #expect(router.application(for: .application(ApplicationMessage(kind: 0x24, body: [0]))) == nil)
        #expect(router.application(for: .data([])) == nil)
    }

    @Test("a kind or number taken twice, a kind that is not an application command, or number 0 is refused")
    func refusals() throws {
        var router = ApplicationRouter()
        try router.add(MessageRecorder(kinds: [0x25], numbers: [1]))
        #expect(throws: SessionError.self) { try router.add(MessageRecorder(kinds: [0x25])) }
        #expect(throws: SessionError.self) { try router.add(MessageRecorder(numbers: [1])) }
        #expect(throws: SessionError.self) { try router.add(MessageRecorder(kinds: [0x30])) }
        #expect(throws: SessionError.self) { try router.add(MessageRecorder(kinds: [0x2A])) }
        #expect(throws: SessionError.self) { try router.add(MessageRecorder(numbers: [0])) }
        var count = 0
        router.forEach { _ in count += 1 }
        #expect(count == 1, "a refused application is not added")
    }
}
