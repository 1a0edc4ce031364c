import Testing
import WireCodec

@Suite("Datagram")
struct DatagramTests {
    @Test("the spec's datagram, both ways")
    func golden() throws {
        #expect(hex(try GoldenVectors.datagram.encode()) == GoldenVectors.datagramHex)
        #expect(try Datagram.decode(bytes(hex: GoldenVectors.datagramHex)) == GoldenVectors.datagram)
    }

    @Test("the builder stops at 1200 bytes and says so")
    func fills() throws {
        var builder = DatagramBuilder(header: DatagramHeader(linkToken: 1, sequence: UInt32.max))
        var count = 0
        let move = Message.application(ApplicationMessage(kind: 0x25, body: Array(0..<11)))  // a move's 13 bytes
        while try builder.append(move) { count += 1 }
        let bytes = try builder.finish()
        #expect(bytes.count <= Wire.maxDatagramLength)
        #expect(bytes.count + 13 > Wire.maxDatagramLength)
        #expect(count == (Wire.maxDatagramLength - 8 - 5) / 13)
        #expect(try Datagram.decode(bytes).messages.count == count)
    }

    @Test("data and appMessage above the sender's 1024 bytes are taken in a datagram up to what fits (section 11.6)")
    func unreliableDataAboveTheSendersLimit() throws {
        let header = DatagramHeader(linkToken: 1, sequence: 1)
        // 9 bytes of header, 2 of frame length, 1 of kind, 2 of payload length: the rest of 1200 is payload.
        let largest = Wire.maxDatagramLength - header.size - 2 - 1 - 2
        #expect(largest > Wire.maxUnreliableDataLength)
        for message in [
            Message.data([UInt8](repeating: 7, count: largest)),
            .appMessage(AppMessage(app: 9, bytes: [UInt8](repeating: 7, count: largest - 1))),
        ] {
            let bytes = try Datagram(header: header, messages: [message]).encode()
            #expect(bytes.count == Wire.maxDatagramLength)
            #expect(try Datagram.decode(bytes).messages == [message])
        }
        let tooLarge = Datagram(header: header, messages: [.data([UInt8](repeating: 7, count: largest + 1))])
        #expect(errorCode { () throws(WireError) in try tooLarge.encode() } == .datagramTooLarge)
    }

    @Test("a datagram's messages are read one at a time")
    func reader() throws {
        let bytes = try GoldenVectors.datagram.encode()
        try bytes.withUnsafeBytes { raw in
            var reader = try DatagramReader(raw)
            #expect(reader.header.sequence == 5)
            #expect(try reader.next() == GoldenVectors.datagram.messages[0])
            #expect(try reader.next() == GoldenVectors.datagram.messages[1])
            #expect(try reader.next() == nil)
        }
    }

    @Test("malformed datagrams are rejected whole")
    func malformed() throws {
        let good = try GoldenVectors.datagram.encode()
        let decode = { (bytes: [UInt8]) in errorCode { () throws(WireError) in try Datagram.decode(bytes) } }
        #expect(decode(Array(good.prefix(9))) == .emptyDatagram)
        #expect(decode(Array(good.prefix(7))) == .truncated)
        #expect(decode(Array(good.dropLast())) == .truncated)
        #expect(decode(good + [0x00]) == .truncated)
        #expect(decode(good + [0x01, 0x77]) == .unknownKind)
        #expect(decode(good + [UInt8](repeating: 0x02, count: 1200)) == .datagramTooLarge)
        var badSequence = good
        badSequence[8] = 0x80  // sequence continues into the frame length: 0x0c → 1548, 2 bytes
        #expect(decode(badSequence) != nil)
        #expect(
            errorCode { () throws(WireError) in
                try Datagram(header: DatagramHeader(linkToken: 1, sequence: 1), messages: []).encode()
            } == .emptyDatagram)
    }

    @Test("an error inside a datagram reports its offset in the datagram")
    func errorOffset() throws {
        let good = try GoldenVectors.datagram.encode()
        do {
            _ = try Datagram.decode(good + [0x01, 0x77])
            Issue.record("expected an error")
        } catch {
            #expect(error.offset == good.count + 1)
        }
    }
}
