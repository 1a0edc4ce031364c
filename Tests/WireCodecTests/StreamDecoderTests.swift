import PropertyBased
import Testing
import WireCodec

@Suite("StreamDecoder")
struct StreamDecoderTests {
    static let stream: (messages: [Message], bytes: [UInt8]) = {
        var bytes: [UInt8] = []
        var messages: [Message] = []
        for _ in 0..<3 {
            for message in oneOfEveryKind + GoldenVectors.frames.map(\.message) {
                messages.append(message)
                try! StreamFraming.encode(message, into: &bytes)
            }
        }
        return (messages, bytes)
    }()

    func decodeAll(chunks: [ArraySlice<UInt8>]) throws -> [Message] {
        var decoder = StreamDecoder()
        var messages: [Message] = []
        for chunk in chunks {
            chunk.withUnsafeBytes { decoder.append($0) }
            while let message = try decoder.next() { messages.append(message) }
        }
        #expect(decoder.bufferedByteCount == 0)
        return messages
    }

    @Test("one byte at a time yields the same messages")
    func oneByteAtATime() throws {
        let bytes = Self.stream.bytes
        let chunks = bytes.indices.map { bytes[$0...$0] }
        #expect(try decodeAll(chunks: chunks) == Self.stream.messages)
    }

    @Test("one chunk yields the same messages")
    func wholeStream() throws {
        #expect(try decodeAll(chunks: [Self.stream.bytes[...]]) == Self.stream.messages)
    }

    @Test("any chunking yields the same messages")
    func randomChunking() async {
        await propertyCheck(count: 200, input: Gen.int(in: 1...300).array(of: 1...400)) { sizes in
            let bytes = Self.stream.bytes
            var chunks: [ArraySlice<UInt8>] = []
            var start = 0
            var index = 0
            while start < bytes.count {
                let end = min(bytes.count, start + sizes[index % sizes.count])
                chunks.append(bytes[start..<end])
                start = end
                index += 1
            }
            let decoded = try decodeAll(chunks: chunks)
            #expect(decoded == Self.stream.messages)
        }
    }

    @Test("a frame announcing too much is refused before its body is buffered")
    func refusesEarly() {
        var decoder = StreamDecoder(limits: WireLimits(maxFrameLength: 1000))
        decoder.append(contentsOf: [0xE9, 0x07])  // 1001
        #expect(errorCode { () throws(WireError) in try decoder.next() } == .frameTooLong)
        #expect(decoder.bufferedByteCount == 2)
    }

    @Test("after an error every call throws the same error")
    func stickyError() throws {
        var decoder = StreamDecoder()
        decoder.append(contentsOf: try StreamFraming.encode(.ack(sequence: 1)))
        decoder.append(contentsOf: [0x01, 0x99])  // unknown kind
        decoder.append(contentsOf: try StreamFraming.encode(.ack(sequence: 2)))
        #expect(try decoder.next() == .ack(sequence: 1))
        #expect(errorCode { () throws(WireError) in try decoder.next() } == .unknownKind)
        #expect(errorCode { () throws(WireError) in try decoder.next() } == .unknownKind)
    }

    @Test("consumed bytes are released: the buffer holds only the incomplete frame")
    func bounded() throws {
        var decoder = StreamDecoder()
        let frame = try StreamFraming.encode(.application(ApplicationMessage(kind: 0x25, body: Array(0..<11))))
        for _ in 0..<10_000 {
            decoder.append(contentsOf: frame + frame.prefix(5))
            #expect(try decoder.next() != nil)
            decoder.append(contentsOf: frame.dropFirst(5))
            #expect(try decoder.next() != nil)
            #expect(try decoder.next() == nil)
        }
        #expect(decoder.bufferedByteCount == 0)
    }
}
