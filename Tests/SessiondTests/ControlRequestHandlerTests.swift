import Foundation
import NIOCore
import NIOEmbedded
import SessionControl
import Testing

@testable import sessiond

/// A control connection's request handler on an embedded channel: what it answers on the loop, what it hands to the
/// connection's task, and that replies keep their requests' order.
@Suite("ControlRequestHandler")
struct ControlRequestHandlerTests {
    /// Answers `increment` at once with its count; hands anything else on.
    static func channel() -> (EmbeddedChannel, ControlRequestHandler) {
        let handler = ControlRequestHandler { command in
            guard case .increment(let count) = command else { return nil }
            return .success(.increment(IncrementResult(local: UInt64(count))))
        }
        return (EmbeddedChannel(handler: handler), handler)
    }

    static func send(_ channel: EmbeddedChannel, _ text: String) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    static func replies(_ channel: EmbeddedChannel) throws -> [String] {
        var lines: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { lines.append(String(buffer: buffer)) }
        return lines
    }

    /// The commands handed to the task so far (`!` for a malformed line).
    static func handedOn(_ channel: EmbeddedChannel) throws -> [String] {
        var commands: [String] = []
        while let input = try channel.readInbound(as: ControlInput.self) {
            switch input {
            case .command(let command): commands.append(command.name)
            case .refused(let error): commands.append("?" + error.message)
            case .malformed: commands.append("!")
            }
        }
        return commands
    }

    @Test("a request it can answer now is answered on the loop, with its newline, and never reaches the task")
    func answeredOnTheLoop() throws {
        let (channel, _) = Self.channel()
        try Self.send(channel, #"{"command": "increment", "count": 3}"#)
        #expect(try Self.replies(channel) == [#"{"ok":true,"result":{"local":3}}"# + "\n"])
        #expect(try Self.handedOn(channel).isEmpty)
        _ = try channel.finish()
    }

    @Test("other requests go to the task decoded; while one is with it, those after it follow it there, in order")
    func orderKept() throws {
        let (channel, handler) = Self.channel()
        try Self.send(channel, #"{"command": "status"}"#)
        try Self.send(channel, #"{"command": "increment"}"#)
        #expect(try Self.handedOn(channel) == ["status", "increment"], "the increment waits its turn")
        #expect(try Self.replies(channel).isEmpty)
        handler.answered()
        try Self.send(channel, #"{"command": "increment"}"#)
        #expect(try Self.handedOn(channel) == ["increment"], "the task still owes the first increment's reply")
        handler.answered()
        handler.answered()
        try Self.send(channel, #"{"command": "increment"}"#)
        #expect(try Self.replies(channel) == [#"{"ok":true,"result":{"local":1}}"# + "\n"])
        _ = try channel.finish()
    }

    @Test("a line that is not a request goes to the task, which closes the connection")
    func malformed() throws {
        let (channel, _) = Self.channel()
        try Self.send(channel, "not json")
        try Self.send(channel, #"{"count": 1}"#)
        try Self.send(channel, #"{"command": "increment"}"#)
        #expect(try Self.handedOn(channel) == ["!", "!", "increment"])
        #expect(try Self.replies(channel).isEmpty)
        _ = try channel.finish()
    }

    @Test("a refused request is answered on the loop when nothing is with the task, and follows the task's otherwise")
    func refused() throws {
        let (channel, handler) = Self.channel()
        try Self.send(channel, #"{"command": "fly"}"#)
        #expect(try Self.replies(channel) == [#"{"ok":false,"error":"unknown command \"fly\""}"# + "\n"])
        try Self.send(channel, #"{"command": "status"}"#)
        try Self.send(channel, #"{"command": "move", "view": 1}"#)
        #expect(try Self.handedOn(channel) == ["status", "?move needs x and y"])
        #expect(try Self.replies(channel).isEmpty)
        handler.answered()
        handler.answered()
        _ = try channel.finish()
    }
}
