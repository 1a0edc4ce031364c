import PropertyBased
import Testing
import WireCodec

/// Round trips over random values. Each run draws a new seed; a failure prints the seed to replay it with
/// `.fixedSeed(...)`.
@Suite("Properties")
struct PropertyTests {
    @Test("any valid message survives a stream round trip with its computed size")
    func streamRoundTrip() async {
        await propertyCheck(count: 5_000, input: MessageGenerators.messages) { message in
            let frame = try StreamFraming.encode(message)
            #expect(try StreamFraming.frameSize(of: message) == frame.count)
            #expect(try decodeWholeFrame(frame) == message)
        }
    }

    @Test("any valid message sequence survives a datagram round trip when it fits")
    func datagramRoundTrip() async {
        await propertyCheck(count: 1_000, input: MessageGenerators.messageSequences) { messages in
            var builder = DatagramBuilder(header: DatagramHeader(linkToken: 99, sequence: 1))
            var packed: [Message] = []
            for message in messages {
                guard try builder.append(message) else { break }
                packed.append(message)
            }
            guard !packed.isEmpty else { return }
            let bytes = try builder.finish()
            #expect(bytes.count <= Wire.maxDatagramLength)
            let datagram = try Datagram.decode(bytes)
            #expect(datagram.messages == packed)
            #expect(datagram.header == DatagramHeader(linkToken: 99, sequence: 1))
        }
    }

    @Test("arbitrary bytes never trap the stream decoder, and errors are sticky")
    func garbageNeverTraps() async {
        await propertyCheck(count: 5_000, input: MessageGenerators.garbage) { bytes in
            var decoder = StreamDecoder()
            decoder.append(contentsOf: bytes)
            do throws(WireError) {
                while try decoder.next() != nil {}
            } catch {
                #expect(errorCode { () throws(WireError) in try decoder.next() } == error.code)
            }
            _ = errorCode { () throws(WireError) in try Datagram.decode(bytes) }
        }
    }

    @Test("a single flipped byte in a valid frame decodes or fails with a code, never traps")
    func mutatedFrames() async {
        await propertyCheck(count: 3_000, input: MessageGenerators.messages, Gen.int(in: 0...10_000), Gen.uint8()) {
            message, position, value in
            var frame = try StreamFraming.encode(message)
            frame[position % frame.count] = value
            var decoder = StreamDecoder()
            decoder.append(contentsOf: frame)
            _ = errorCode { () throws(WireError) in try decoder.next() }
        }
    }
}
