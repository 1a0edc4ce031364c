import BubblesAndCounter
import PropertyBased
import Testing
import WireCodec

/// The apps' messages framed from their fields and read from their frames, with no intermediate message: the bytes
/// of the golden vectors, and the messages and errors of the session's path (an application message in a frame).
@Suite("BubblesAndCounterMessage frames")
struct BubblesAndCounterFramingTests {
    typealias Vectors = MessageGoldenVectors

    /// Decodes `frame` straight into the apps' message.
    static func decode(
        _ frame: [UInt8], limits: WireLimits = .default
    ) throws(WireError) -> (frame: ApplicationFrame<BubblesAndCounterMessage>, length: Int)? {
        let result = frame.withUnsafeBytes { raw in
            Result { () throws(WireError) in try BubblesAndCounterMessage.decodeFrame(raw, limits: limits) }
        }
        return try result.get()
    }

    /// What the session's path makes of `frame`: the general frame decoder, then the apps' reader of its body.
    static func sessionPath(_ frame: [UInt8]) throws(WireError) -> BubblesAndCounterMessage? {
        let result = frame.withUnsafeBytes { raw in
            Result { () throws(WireError) in try StreamFraming.decodeFrame(raw) }
        }
        guard let (message, _) = try result.get() else { return nil }
        do throws(WireError) {
            return try BubblesAndCounterMessage(message)
        } catch {
            // The reader counts from the kind byte; a frame's one-byte header comes before it.
            var located = error
            located.offset += 1
            throw located
        }
    }

    /// The error `body` ends in, or nil.
    static func error<T>(_ body: () throws(WireError) -> T) -> WireError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    @Test("the golden vectors, both ways", arguments: MessageGoldenVectors.frames.map { ($0.name, $0.message, $0.hex) })
    func golden(name: String, message: BubblesAndCounterMessage, hex: String) throws {
        let frame = Vectors.bytes(hex: hex)
        #expect(try message.frame() == frame, "\(name)")
        #expect(try message.frameSize() == frame.count, "\(name)")
        var memory = [UInt8](repeating: 0xEE, count: frame.count + 4)
        let written = try memory.withUnsafeMutableBytes { raw throws(WireError) in try message.encodeFrame(into: raw) }
        #expect(written == frame.count && Array(memory[..<written]) == frame, "\(name)")
        #expect(memory[written...].allSatisfy { $0 == 0xEE })
        let decoded = try Self.decode(frame)
        #expect(decoded?.frame == .command(message) && decoded?.length == frame.count, "\(name)")
    }

    @Test(
        "every cut, changed or lengthened golden frame reads as on the session's path, or fails as there",
        arguments: MessageGoldenVectors.frames.map(\.hex))
    func malformed(hex: String) throws {
        let frame = Vectors.bytes(hex: hex)
        var variants: [[UInt8]] = []
        for length in 1..<frame.count {
            // A body cut short, its header saying so.
            variants.append([UInt8(length - 1)] + frame[1..<length])
        }
        variants.append([frame[0] + 1] + frame.dropFirst() + [0x00])
        for index in 2..<frame.count {
            for value: UInt8 in [0x00, 0x7F, 0x80, 0xFF] {
                var changed = frame
                changed[index] = value
                variants.append(changed)
            }
        }
        for variant in variants {
            let expected = Self.error { () throws(WireError) in try Self.sessionPath(variant) }
            let found = Self.error { () throws(WireError) in try Self.decode(variant) }
            #expect(found == expected, "\(Vectors.hex(variant))")
            if expected == nil {
                #expect(try Self.decode(variant)?.frame == .command(try Self.sessionPath(variant)!))
            }
        }
    }

    @Test("a move to a coordinate that is not finite, an increment of 0 or with an overlong count fail as before")
    func frequentErrors() throws {
        let nan = Float.nan.bitPattern
        let move = Vectors.bytes(hex: "0c 25 01 00 00 c9 42 00 00 a2 c1 02 01")
        var notFinite = move
        withUnsafeBytes(of: nan.littleEndian) { notFinite.replaceSubrange(7..<11, with: $0) }
        #expect(Self.error { () throws(WireError) in try Self.decode(notFinite) }?.code == .nonFiniteCoordinate)
        #expect(Self.error { () throws(WireError) in try Self.decode([0x02, 0x27, 0x00]) }?.code == .valueOutOfRange)
        #expect(
            Self.error { () throws(WireError) in try Self.decode([0x03, 0x27, 0x80, 0x00]) }?.code == .overlongVarint)
        #expect(
            Self.error { () throws(WireError) in try Self.decode([0x03, 0x27, 0x01, 0x01]) }?.code == .trailingBytes)
        var memory = [UInt8](repeating: 0xEE, count: 16)
        for message: BubblesAndCounterMessage in [
            .move(Move(view: 0, x: .infinity, y: 0, sequence: 0)), .counterIncrement(count: 0),
        ] {
            #expect(throws: WireError.self) {
                try memory.withUnsafeMutableBytes { raw throws(WireError) in try message.encodeFrame(into: raw) }
            }
        }
        #expect(memory.allSatisfy { $0 == 0xEE })
    }

    @Test("the session's own messages come back as they are; a cut frame needs more bytes")
    func others() throws {
        for message: Message in [.ack(sequence: 300), .data([1, 2, 3]), .bye(.leaving)] {
            let frame = try StreamFraming.encode(message)
            #expect(try Self.decode(frame)?.frame == .other(message))
        }
        #expect(try Self.decode([]) == nil)
        #expect(try Self.decode([0x0C, 0x25, 0x01]) == nil)
    }

    @Test("any message of the apps' kinds that reads frames as the session's path frames it, and reads back")
    func sameAsSessionPath() async {
        await propertyCheck(count: 5_000, input: BubblesAndCounterMessagePropertyTests.bodies) { input in
            let (kind, body) = input
            guard let message = try? BubblesAndCounterMessage(ApplicationMessage(kind: kind, body: body)) else {
                return
            }
            let frame = try message.frame()
            #expect(frame == (try StreamFraming.encode(try message.message())))
            #expect(try Self.decode(frame)?.frame == .command(message))
        }
    }
}
