import Foundation
import SessionControl
import Testing

/// Commands to and from their request lines: docs/control-protocol.md's requests (with values in place of its
/// placeholders) read as the typed command and written back as the same object; bad ones refused with the documented
/// error; lines that are no request at all told apart from both.
@Suite("ControlCommand")
struct ControlCommandTests {
    static let golden: [(String, ControlCommand)] = [
        (#"{"command": "status"}"#, .status),
        (#"{"command": "peers"}"#, .peers),
        (#"{"command": "increment", "count": 3}"#, .increment(count: 3)),
        (#"{"command": "counter"}"#, .counter),
        (#"{"command": "watch"}"#, .watch()),
        (#"{"command": "watch", "since": 41}"#, .watch(since: 41)),
        (#"{"command": "watch", "since": 0, "run": "5f0c2a9e41d3b786"}"#, .watch(since: 0, run: "5f0c2a9e41d3b786")),
        (#"{"command": "bubbles"}"#, .bubbles),
        (#"{"command": "pickup", "view": 1}"#, .pickUp(view: 1)),
        (#"{"command": "move", "view": 1, "x": 122.5, "y": 109}"#, .move(view: 1, x: 122.5, y: 109)),
        (#"{"command": "drop", "view": 2}"#, .drop(view: 2)),
        (#"{"command": "drop", "view": 2, "x": 10, "y": 20.25}"#, .drop(view: 2, x: 10, y: 20.25)),
        (#"{"command": "invitations"}"#, .invitations),
        (#"{"command": "accept", "id": 7}"#, .accept(id: 7)),
        (#"{"command": "decline", "id": 7, "reason": "text"}"#, .decline(id: 7, reason: "text")),
        (
            #"{"command": "bench", "peer": "h2", "transport": "lan", "channel": "reliable", "count": 100, "size": 16}"#,
            .bench(ControlCommand.Bench(peer: "h2", transport: "lan", count: 100, size: 16))
        ),
        (
            #"{"command": "send", "peer": "h2", "channel": "unreliable", "data": "aGVsbG8="}"#,
            .send(data: Data("hello".utf8), peer: "h2", channel: .unreliable)
        ),
        (
            #"{"command": "send", "peer": "h2", "channel": "durable", "data": "aGVsbG8="}"#,
            .send(data: Data("hello".utf8), peer: "h2", channel: .durable)
        ),
        (
            #"{"command": "push", "path": "/abs/file", "peer": "h2", "name": "N"}"#,
            .push(path: "/abs/file", peer: "h2", name: "N")
        ),
        (#"{"command": "pair", "peer": "000000000000002a"}"#, .pair(peer: 42)),
        (#"{"command": "pair", "peer": "000000000000002a", "code": "123456"}"#, .pair(peer: 42, code: "123456")),
        (#"{"command": "pairings"}"#, .pairings),
        (#"{"command": "devices"}"#, .devices),
        (#"{"command": "unpair", "peer": "00000000deadbeef"}"#, .unpair(peer: 0xdead_beef)),
        (
            #"{"command": "stream", "path": "/abs/file", "peer": "h2", "name": "N"}"#,
            .stream(path: "/abs/file", peer: "h2", name: "N")
        ),
        (#"{"command": "streams"}"#, .streams),
        (#"{"command": "web"}"#, .web),
        (#"{"command": "transfers"}"#, .transfers),
        (
            #"{"command": "cancel", "transfer": "out:000000000000002a/1", "reason": "text"}"#,
            .cancel(transfer: "out:000000000000002a/1", reason: "text")
        ),
    ]

    static func object(_ data: Data) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: data) as? NSDictionary)
    }

    @Test("every documented request reads as its command and is written back as the same object")
    func roundTrip() throws {
        for (text, command) in Self.golden {
            let decoded = try JSONDecoder().decode(ControlCommand.self, from: Data(text.utf8))
            #expect(decoded == command, "\(text)")
            let encoded = try JSONEncoder().encode(command)
            #expect(try Self.object(encoded) == Self.object(Data(text.utf8)), "\(text)")
        }
        let names = Set(Self.golden.map(\.1.name))
        #expect(names.count == 24, "every command has its golden line")
    }

    @Test("defaults: increment once, bench 1000 reliable round trips, send reliably to every member")
    func defaults() throws {
        let decode = { (text: String) in try JSONDecoder().decode(ControlCommand.self, from: Data(text.utf8)) }
        #expect(try decode(#"{"command": "increment"}"#) == .increment(count: 1))
        #expect(try decode(#"{"command": "bench", "peer": "h2"}"#) == .bench(ControlCommand.Bench(peer: "h2")))
        #expect(try decode(#"{"command": "send", "data": ""}"#) == .send(data: Data()))
        #expect(try decode(#"{"command": "pair", "peer": "000000000000002A"}"#) == .pair(peer: 42))
    }

    @Test(
        "a bad request is refused with the documented error, the connection kept",
        arguments: [
            (#"{"command": "fly"}"#, #"unknown command "fly""#),
            (#"{"command": "increment", "count": 0}"#, "count must be at least 1"),
            (#"{"command": "pickup"}"#, "no bubble given; bubbles are 0, 1, 2"),
            (#"{"command": "move", "view": 1, "x": 1}"#, "move needs x and y"),
            (#"{"command": "accept"}"#, "accept needs an invitation id"),
            (#"{"command": "decline", "reason": "no"}"#, "decline needs an invitation id"),
            (#"{"command": "bench"}"#, "bench needs a peer (peer id or name)"),
            (#"{"command": "bench", "peer": "h2", "count": 0}"#, "count must be 1...1000000"),
            (
                #"{"command": "bench", "peer": "h2", "channel": "fast"}"#,
                "channel must be reliable, unreliable or durable"
            ),
            (
                #"{"command": "bench", "peer": "h2", "channel": "durable"}"#,
                "bench measures the reliable or the unreliable channel"
            ),
            (#"{"command": "send"}"#, "send needs data (base64)"),
            (#"{"command": "send", "data": "not base64!"}"#, "send needs data (base64)"),
            (#"{"command": "send", "data": "", "channel": "x"}"#, "channel must be reliable, unreliable or durable"),
            (#"{"command": "push", "path": "relative", "peer": "h2"}"#, "push needs an absolute path and a peer"),
            (#"{"command": "stream", "path": "/abs"}"#, "stream needs an absolute path and a peer"),
            (#"{"command": "cancel"}"#, "cancel needs a transfer id"),
            (#"{"command": "pair"}"#, "pair needs a peer id (16 hex digits), got none"),
            (#"{"command": "unpair", "peer": "h2"}"#, "unpair needs a peer id (16 hex digits), got h2"),
            (#"{"command": "watch", "run": "5f0c2a9e41d3b786"}"#, "run goes with since"),
        ])
    func refused(_ text: String, _ message: String) {
        #expect(throws: ControlError(message)) {
            try JSONDecoder().decode(ControlCommand.self, from: Data(text.utf8))
        }
    }

    @Test(
        "a line that is no request is a decoding error, not a refusal",
        arguments: [
            "not json", "{}", #"{"count": 1}"#, #"{"command": 5}"#, #"{"command": "increment", "count": "1"}"#,
            #"[{"command": "status"}]"#, #"{"command": "watch", "since": -1}"#, #"{"command": "watch", "since": "1"}"#,
        ])
    func notARequest(_ text: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ControlCommand.self, from: Data(text.utf8))
        }
    }

    @Test("results and refusals are written as the documented reply lines")
    func replies() throws {
        let done: Result<ControlResult, ControlError> = .success(.done)
        #expect(String(decoding: done.replyLine, as: UTF8.self) == #"{"ok":true,"result":{"done":true}}"#)
        let subscribed: Result<ControlResult, ControlError> = .success(.subscribed)
        #expect(String(decoding: subscribed.replyLine, as: UTF8.self) == #"{"ok":true,"result":{}}"#)
        let watching: Result<ControlResult, ControlError> = .success(
            .watching(WatchResult(run: "5f0c2a9e41d3b786", seq: 41)))
        let watchReply = try Self.object(watching.replyLine)
        #expect(watchReply["result"] as? NSDictionary == ["run": "5f0c2a9e41d3b786", "seq": 41])
        let refused: Result<ControlResult, ControlError> = .failure(ControlError("no bubble 7; bubbles are 0, 1, 2"))
        #expect(
            String(decoding: refused.replyLine, as: UTF8.self)
                == #"{"ok":false,"error":"no bubble 7; bubbles are 0, 1, 2"}"#)
        let bubbles: Result<ControlResult, ControlError> = .success(
            .bubbles([BubbleResult(view: 0, holder: nil, x: 160, y: 80)]))
        let object = try Self.object(bubbles.replyLine)
        #expect(object["ok"] as? Bool == true)
        let first = try #require((object["result"] as? [NSDictionary])?.first)
        #expect(first["holder"] == nil, "a free bubble has no holder key")
        #expect(first["view"] as? Int == 0)
    }
}
