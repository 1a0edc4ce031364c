import Foundation
import NIOCore
import SessionControl
import TestSupport
import Testing

@testable import sessiond

/// Requests read without JSONDecoder: the common shape, and never anything JSONDecoder would read otherwise.
@Suite("FlatRequest")
struct FlatRequestTests {
    static func decoded(_ text: String) -> ControlRequestLine? {
        try? JSONDecoder().decode(ControlRequestLine.self, from: Data(text.utf8))
    }

    static func fast(_ text: String) -> ControlRequestLine? {
        FlatRequest.parse(ByteBuffer(string: text))
    }

    @Test(
        "the common requests are read here, as JSONDecoder reads them",
        arguments: [
            #"{"command": "increment", "count": 1}"#, #"{"command":"increment","count":-3}"#, #"{"command": "status"}"#,
            #"  { "command" : "watch" }  "#, "{\"command\":\t\"peers\"}\r", #"{"count": 0, "command": "increment"}"#,
            #"{"command": "bench", "peer": "h2", "channel": "reliable", "count": 1000, "size": 16, "transport": "lan"}"#,
            #"{"command": "accept", "id": 18446744}"#, #"{"command": "send", "data": "aGVsbG8=", "peer": "a b"}"#,
            #"{"command": "pickup", "view": 2}"#, #"{"command": ""}"#,
            #"{"command": "pair", "peer": "000000000000002a", "code": "123456"}"#,
        ])
    func common(_ text: String) throws {
        let fast = try #require(Self.fast(text), "read here: \(text)")
        #expect(fast == Self.decoded(text))
    }

    @Test(
        "anything else is left to JSONDecoder",
        arguments: [
            #"{"command": "move", "view": 1, "x": 1.5, "y": 2}"#, #"{"command": "increment", "count": 1.0}"#,
            #"{"command": "increment", "count": 1e2}"#, #"{"command": "increment", "count": 01}"#,
            #"{"command": "increment", "count": -0}"#, #"{"command": "incr\u0065ment"}"#, #"{"command": "a\"b"}"#,
            #"{"command": "increment", "count": null}"#, #"{"command": "increment", "count": "1"}"#,
            #"{"command": "x", "command": "y"}"#, #"{"command": "x", "unknown": 1}"#, #"{"count": 1}"#, "{}",
            #"{"command": "x",}"#, #"[{"command": "x"}]"#, #"{"command": "x"} {"#, #"{"command": "é"}"#,
            #"{"command": "increment", "count": 1234567890123456789}"#, #"{"command": "accept", "id": -1}"#, "",
            "not json", #"{"command": 5}"#,
        ])
    func leftToTheDecoder(_ text: String) {
        #expect(Self.fast(text) == nil, "\(text)")
    }

    @Test("on lines made of JSON's pieces at random, what is read here is always what JSONDecoder reads")
    func randomLines() {
        var random = SplitMix64(seed: 42)
        let pieces = [
            "{", "}", "\"command\"", "\"count\"", "\"id\"", "\"view\"", "\"peer\"", "\"x\"", ":", ",", " ", "\t",
            "\"increment\"", "\"h2\"", "\"\"", "1", "-", "0", "9", ".", "e", "null", "true", "\"a\\\"b\"", "[", "]",
        ]
        var readHere = 0
        for _ in 0..<50_000 {
            var text = ""
            if Bool.random(using: &random) {
                text = "{\"command\": \"increment\"" + (Bool.random(using: &random) ? "," : "")
            }
            for _ in 0..<Int.random(in: 0...10, using: &random) { text += pieces.randomElement(using: &random)! }
            if Bool.random(using: &random) { text += "}" }
            guard let fast = Self.fast(text) else { continue }
            readHere += 1
            #expect(fast == Self.decoded(text), "\(text)")
        }
        #expect(readHere > 100, "some random lines are of the shape read here")
    }
}
