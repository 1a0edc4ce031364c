import Testing
import WireCodec

@Suite("Message")
struct MessageTests {
    @Test("every kind is covered by the samples and the golden vectors")
    func everyKindCovered() {
        let sessionKinds = Set(MessageKind.sessionKinds)
        #expect(Set(oneOfEveryKind.map(\.kind)) == sessionKinds.union([.application(0x20), .application(0x29)]))
        #expect(Set(GoldenVectors.frames.map(\.message.kind)) == sessionKinds)
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
        for kind in MessageKind.allKinds {
            #expect(kind.isSequenced == (kind.rawValue >= 0x20 && kind.rawValue <= 0x3F))
        }
    }

    @Test("an application kind's body goes unread, whatever it holds; another kind byte is refused")
    func applicationMessages() throws {
        for kind in MessageKind.applicationKinds {
            let message = Message.application(ApplicationMessage(kind: kind, body: [0xFF, 0x00, 0x80]))
            #expect(try decodeWholeFrame(try StreamFraming.encode(message)) == message)
            #expect(message.kind == .application(kind))
        }
        for kind: UInt8 in [0x1F, 0x2A, 0x30] {
            let message = Message.application(ApplicationMessage(kind: kind, body: []))
            #expect(errorCode { () throws(WireError) in try StreamFraming.encode(message) } == .valueOutOfRange)
        }
    }

    @Test("a body kept in place (up to 16 bytes) and one in an array read, compare and frame alike")
    func applicationBodyStorage() throws {
        for count in [0, 1, 15, 16, 17, 300] {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            let given = ApplicationMessage(kind: 0x23, body: bytes)
            let written = ApplicationMessage(kind: 0x23, bodySize: count) { writer in writer.writeRaw(bytes) }
            #expect(given == written, "\(count) bytes")
            #expect(given.hashValue == written.hashValue, "\(count) bytes")
            #expect(given.body == bytes && given.bodyCount == count)
            let frame = try StreamFraming.encode(.application(given))
            #expect(try decodeWholeFrame(frame) == .application(written))
            #expect(Array(frame.suffix(count)) == bytes)
        }
        #expect(ApplicationMessage(kind: 0x23, body: [1]) != ApplicationMessage(kind: 0x23, body: [1, 0]))
        #expect(ApplicationMessage(kind: 0x23, body: [1]) != ApplicationMessage(kind: 0x24, body: [1]))
    }

    @Test("an application reads its body with the codec's reader: fields, trailing bytes, offsets from the kind")
    func applicationBodies() throws {
        let message = ApplicationMessage(kind: 0x21, bodySize: 3) { writer in
            writer.write(7)
            writer.writeVarint(300)
        }
        #expect(message.body == [0x07, 0xAC, 0x02])
        let read = try message.read { reader throws(WireError) in
            (try reader.readByte("index"), try reader.readVarint("timestamp", max: .max))
        }
        #expect(read == (7, 300))
        let trailing = errorCode { () throws(WireError) in
            try message.read { reader throws(WireError) in try reader.readByte("index") }
        }
        #expect(trailing == .trailingBytes)
        do {
            _ = try ApplicationMessage(kind: 0x20, body: [0x05, 0x61]).read { reader throws(WireError) in
                try reader.readString("peer name", maxLength: 63)
            }
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .truncated)
            #expect(error.offset == 2)
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
        try StreamFraming.encode(.application(ApplicationMessage(kind: 0x24, body: [0x01])), into: &buffer)
        #expect(buffer == [1, 2, 3, 0x02, 0x24, 0x01])
    }
}
