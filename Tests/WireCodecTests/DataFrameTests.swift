import Testing

@testable import WireCodec

/// `data` frames written and found without a `Message`: the same bytes as the general path, and nothing else taken
/// for one.
@Suite("data frames in place")
struct DataFrameTests {
    @Test("the header in front of a payload makes the general path's frame, at every length class")
    func header() throws {
        for length in [0, 1, 127, 128, 16_383, 16_384, Wire.maxDataLength] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let general = try StreamFraming.encode(.data(payload))
            let size = StreamFraming.dataFrameHeaderSize(payloadLength: length)
            var frame = [UInt8](repeating: 0, count: size + length)
            let written = try frame.withUnsafeMutableBytes { raw in
                try StreamFraming.writeDataFrameHeader(payloadLength: length, into: raw)
            }
            #expect(written == size)
            frame.replaceSubrange(size..., with: payload)
            #expect(frame == general, "length \(length)")
            let located = general.withUnsafeBytes { StreamFraming.locateDataFrame($0) }
            #expect(located?.payloadOffset == size && located?.payloadLength == length)
            #expect(located?.frameLength == general.count)
        }
    }

    @Test("too long a payload is refused before anything is written")
    func tooLong() {
        var scratch = [UInt8](repeating: 0, count: 8)
        #expect(throws: WireError.self) {
            try scratch.withUnsafeMutableBytes {
                try StreamFraming.writeDataFrameHeader(payloadLength: Wire.maxDataLength + 1, into: $0)
            }
        }
    }

    @Test("anything but a whole, well-formed data frame is left to the general path")
    func notLocated() throws {
        let frame = try StreamFraming.encode(.data([1, 2, 3]))  // 05 30 03 01 02 03
        #expect(frame == [0x05, 0x30, 0x03, 0x01, 0x02, 0x03])
        let cases: [[UInt8]] = [
            Array(frame.dropLast()),  // incomplete
            try StreamFraming.encode(.ack(sequence: 3)),  // another kind
            [0x05, 0x30, 0x02, 0x01, 0x02, 0x03],  // inner length short of the body
            [0x06, 0x30, 0x83, 0x00, 0x01, 0x02, 0x03],  // inner length not in shortest form
            [0x85, 0x00, 0x30, 0x03, 0x01, 0x02, 0x03],  // frame length not in shortest form
        ]
        for bytes in cases {
            #expect(bytes.withUnsafeBytes { StreamFraming.locateDataFrame($0) } == nil, "\(bytes)")
        }
        // The general path says what is wrong with the malformed ones.
        for bytes in cases[2...] {
            #expect(throws: WireError.self, "\(bytes)") {
                _ = try bytes.withUnsafeBytes { try StreamFraming.decodeFrame($0) }
            }
        }
    }
}
