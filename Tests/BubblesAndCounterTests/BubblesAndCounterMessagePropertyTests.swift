import BubblesAndCounter
import PropertyBased
import Testing
import WireCodec

/// What the fuzzing of the codec promised for the apps' kinds before their bodies left it: any body reads or fails
/// with a code, and one that reads writes back to the same bytes (the encoding is canonical).
@Suite("BubblesAndCounterMessage properties")
struct BubblesAndCounterMessagePropertyTests {
    /// A kind of the apps and a body: random bytes, or a golden body with one byte changed.
    static let bodies = Generator<(UInt8, [UInt8]), Shrink.None<(UInt8, [UInt8])>> { rng in
        if Bool.random(using: &rng) {
            let frame = MessageGoldenVectors.bytes(hex: MessageGoldenVectors.frames.randomElement(using: &rng)!.hex)
            var body = Array(frame.dropFirst(2))
            if !body.isEmpty {
                body[Int.random(in: 0..<body.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            return (frame[1], body)
        }
        let count = Int.random(in: 0...40, using: &rng)
        return (
            UInt8.random(in: 0x20...0x29, using: &rng), (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
        )
    }

    @Test("any body of the apps' kinds reads or fails with a code; what reads writes back byte for byte")
    func canonical() async {
        await propertyCheck(count: 5_000, input: Self.bodies) { input in
            let (kind, body) = input
            let message = ApplicationMessage(kind: kind, body: body)
            guard let read = try? BubblesAndCounterMessage(message) else { return }
            let written = try read.applicationMessage()
            #expect(written == message)
        }
    }
}
