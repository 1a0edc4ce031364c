import Testing
import WireCodec

@Suite("Message")
struct MessageTests {
    @Test("every kind is covered by the samples and the golden vectors")
    func everyKindCovered() {
        #expect(Set(oneOfEveryKind.map(\.kind)) == Set(MessageKind.allCases))
        #expect(Set(GoldenVectors.frames.map(\.message.kind)) == Set(MessageKind.allCases))
    }

    @Test("round trip of every kind", arguments: oneOfEveryKind)
    func roundTrip(message: Message) throws {
        let frame = try StreamFraming.encode(message)
        #expect(try StreamFraming.frameSize(of: message) == frame.count)
        #expect(try decodeWholeFrame(frame) == message)
    }

    @Test(
        "golden vectors encode to the spec's bytes",
        arguments: GoldenVectors.frames.map { ($0.name, $0.message, $0.hex) })
    func goldenEncode(name: String, message: Message, expected: String) throws {
        #expect(hex(try StreamFraming.encode(message)) == expected, "\(name)")
    }

    @Test(
        "golden vectors decode to the spec's messages",
        arguments: GoldenVectors.frames.map { ($0.name, $0.message, $0.hex) })
    func goldenDecode(name: String, message: Message, frame: String) throws {
        #expect(try decodeWholeFrame(bytes(hex: frame)) == message, "\(name)")
    }

    @Test("a framed move is 13 bytes; a framed increment 3 bytes up to a count of 127, 4 up to 16383, 11 at most")
    func compactSizes() throws {
        let move = Message.move(Move(view: 255, x: .greatestFiniteMagnitude, y: -1, sequence: .max))
        #expect(try StreamFraming.frameSize(of: move) == 13)
        for (count, size) in [(Wire.minIncrementCount, 3), (127, 3), (128, 4), (16_383, 4), (16_384, 5), (.max, 12)] {
            #expect(try StreamFraming.frameSize(of: .counterIncrement(count: count)) == size, "count \(count)")
        }
    }

    @Test("the listen-port extension reads back; a malformed one is ignored")
    func listenPort() {
        var hello = Hello(peerID: PeerID(1), displayName: "a", sessionName: "s", extensions: [.listenPort(47_000)])
        #expect(hello.listenPort == 47_000)
        for value: [UInt8] in [[], [1], [1, 2, 3], [0, 0]] {
            hello.extensions = [HelloExtension(type: HelloExtension.listenPortType, value: value)]
            #expect(hello.listenPort == nil, "\(value)")
        }
        hello.extensions = []
        #expect(hello.listenPort == nil)
    }

    @Test("the cipher-list extension reads back in its order, unknown numbers kept; an empty or long one is ignored")
    func ciphers() {
        var hello = Hello(
            peerID: PeerID(1), displayName: "a", sessionName: "s", extensions: [.listenPort(1), .ciphers([2, 9, 1])])
        #expect(hello.ciphers == [2, 9, 1])
        #expect(hello.listenPort == 1)
        for value in [[], [UInt8](repeating: 1, count: Wire.maxHelloCiphers + 1)] {
            hello.extensions = [HelloExtension(type: HelloExtension.ciphersType, value: value)]
            #expect(hello.ciphers == nil, "\(value)")
        }
        hello.extensions = [.ciphers([UInt8](repeating: 1, count: Wire.maxHelloCiphers))]
        #expect(hello.ciphers?.count == Wire.maxHelloCiphers)
        hello.extensions = []
        #expect(hello.ciphers == nil)
    }

    @Test("link-control kinds are unsequenced and commands sequenced")
    func sequencedKinds() {
        for kind in MessageKind.allCases {
            #expect(kind.isSequenced == (kind.rawValue >= 0x20 && kind.rawValue <= 0x3F))
        }
    }

    @Test("encoding into caller-owned memory writes the same bytes as into an array")
    func encodeIntoRawMemory() throws {
        for message in oneOfEveryKind {
            let expected = try StreamFraming.encode(message)
            var raw = [UInt8](repeating: 0xEE, count: expected.count + 5)
            let written = try raw.withUnsafeMutableBytes { try StreamFraming.encode(message, into: $0) }
            #expect(written == expected.count)
            #expect(Array(raw[..<written]) == expected)
            #expect(raw[written...].allSatisfy { $0 == 0xEE })
        }
    }

    @Test("appending frames keeps what the buffer held")
    func appendKeepsPrefix() throws {
        var buffer: [UInt8] = [1, 2, 3]
        try StreamFraming.encode(.pickUp(view: 1), into: &buffer)
        #expect(buffer == [1, 2, 3, 0x02, 0x24, 0x01])
    }
}
