import PropertyBased
import Testing

@testable import WireCodec

/// The fixed-layout fast paths of `move` and increments agree byte for byte with the general codec.
@Suite("StreamFraming fast path")
struct FastPathTests {
    static let hotMessages = Generator<Message, Shrink.None<Message>> { rng in
        if Bool.random(using: &rng) {
            let special: [Float] = [.nan, .infinity, -.infinity, 0, -0.0, .greatestFiniteMagnitude]
            let coordinate = { (rng: inout any SeededRandomNumberGenerator) -> Float in
                Int.random(in: 0..<4, using: &rng) == 0
                    ? special.randomElement(using: &rng)!
                    : Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng))
            }
            return .move(
                Move(
                    view: UInt8.random(in: 0...255, using: &rng), x: coordinate(&rng), y: coordinate(&rng),
                    sequence: UInt16.random(in: 0...UInt16.max, using: &rng)))
        }
        let counts: [ClosedRange<UInt64>] = [0...300, 16_000...17_000, 0...UInt64.max]
        return .counterIncrement(count: UInt64.random(in: counts.randomElement(using: &rng)!, using: &rng))
    }

    static let limits = [WireLimits(maxFrameLength: 1), WireLimits(maxFrameLength: 11), WireLimits.default]

    @Test("encoding: the fast path writes what the general path writes, or defers to it")
    func encodeAgrees() async {
        await propertyCheck(count: 5_000, input: Self.hotMessages) { message in
            for limits in Self.limits {
                let fastBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 8)
                let generalBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 8)
                defer {
                    fastBuffer.deallocate()
                    generalBuffer.deallocate()
                }
                fastBuffer.initializeMemory(as: UInt8.self, repeating: 0)
                generalBuffer.initializeMemory(as: UInt8.self, repeating: 0)
                let fastResult = Result { () throws(WireError) in
                    try StreamFraming.encode(message, into: fastBuffer, limits: limits)
                }
                let generalResult = Result { () throws(WireError) in
                    try StreamFraming.encodeGeneral(message, into: generalBuffer, limits: limits)
                }
                let fast = Array(fastBuffer)
                let general = Array(generalBuffer)
                switch (fastResult, generalResult) {
                case (.success(let a), .success(let b)):
                    #expect(a == b)
                    #expect(fast == general)
                case (.failure(let a), .failure(let b)):
                    #expect(a.code == b.code)
                default:
                    Issue.record("fast \(fastResult) general \(generalResult) for \(message)")
                }
            }
        }
    }

    @Test("decoding: the fast path reads what the general path reads, or defers to it")
    func decodeAgrees() async {
        let frames = Generator<[UInt8], Shrink.None<[UInt8]>> { rng in
            var frame: [UInt8] = [[12, 0x25], [2, 0x27], [3, 0x27]].randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 0...14, using: &rng) { frame.append(UInt8.random(in: 0...255, using: &rng)) }
            return frame
        }
        await propertyCheck(count: 10_000, input: frames) { frame in
            for limits in Self.limits {
                frame.withUnsafeBytes { raw in
                    let general = Result { () throws(WireError) in
                        try StreamFraming.decodeFrameGeneral(raw, limits: limits)
                    }
                    if let fast = StreamFraming.decodeFast(raw, limits: limits) {
                        guard case .success(let expected?) = general else {
                            Issue.record("fast path accepted \(frame), general path: \(general)")
                            return
                        }
                        #expect(fast.message == expected.message)
                        #expect(fast.length == expected.length)
                    }
                }
            }
        }
    }
}
