import Testing

@testable import WireCodec

/// `durableData` frames written in front of a payload without a `Message`: the same bytes as the general path.
@Suite("durable frames in place")
struct DurableFrameTests {
    @Test("the header in front of a payload makes the general path's frame, at every length and id class")
    func header() throws {
        for id: UInt64 in [1, 127, 128, 300, 1 << 35, .max] {
            for length in [0, 1, 127, 128, 16_384, Wire.maxDataLength] {
                let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 5) }
                let general = try StreamFraming.encode(.durableData(DurableData(id: id, bytes: payload)))
                let size = StreamFraming.durableFrameHeaderSize(id: id, payloadLength: length)
                var frame = [UInt8](repeating: 0, count: size + length)
                let written = try frame.withUnsafeMutableBytes { raw in
                    try StreamFraming.writeDurableFrameHeader(id: id, payloadLength: length, into: raw)
                }
                #expect(written == size)
                frame.replaceSubrange(size..., with: payload)
                #expect(frame == general, "id \(id), length \(length)")
            }
        }
    }

    @Test("the golden vector of section 10.5: id 300, \"hi\"")
    func golden() throws {
        var frame = [UInt8](repeating: 0, count: 5)
        try frame.withUnsafeMutableBytes { raw in
            _ = try StreamFraming.writeDurableFrameHeader(id: 300, payloadLength: 2, into: raw)
        }
        #expect(frame + Array("hi".utf8) == [0x06, 0x36, 0xAC, 0x02, 0x02, 0x68, 0x69])
    }

    @Test("id 0 and too long a payload are refused before anything is written")
    func refused() {
        var scratch = [UInt8](repeating: 0, count: 16)
        for (id, length) in [(UInt64(0), 1), (1, Wire.maxDataLength + 1)] {
            #expect(throws: WireError.self) {
                try scratch.withUnsafeMutableBytes {
                    try StreamFraming.writeDurableFrameHeader(id: id, payloadLength: length, into: $0)
                }
            }
            #expect(scratch.allSatisfy { $0 == 0 })
        }
    }
}
