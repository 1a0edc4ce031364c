import BubblesAndCounter
import Foundation
import Testing
import WireCodec

/// The original apps' messages as docs/wire-format.md lays them out: read and written by this module, carried by the
/// codec as application messages, byte for byte the spec's.
@Suite("BubblesAndCounterMessage")
struct BubblesAndCounterMessageTests {
    typealias Vectors = MessageGoldenVectors

    /// Decodes one framed message of the apps.
    static func decode(_ frame: [UInt8]) throws(WireError) -> BubblesAndCounterMessage? {
        let result = frame.withUnsafeBytes { raw in
            Result { () throws(WireError) in try StreamFraming.decodeFrame(raw) }
        }
        guard let (message, length) = try result.get(), length == frame.count else { return nil }
        return try BubblesAndCounterMessage(message)
    }

    /// The error code a message's body ends in, or nil when it reads.
    static func bodyError(_ kind: UInt8, _ body: [UInt8]) -> WireError.Code? {
        do {
            _ = try BubblesAndCounterMessage(ApplicationMessage(kind: kind, body: body))
            return nil
        } catch {
            return error.code
        }
    }

    /// The error code encoding `message` ends in, or nil when it encodes.
    static func encodeError(_ message: BubblesAndCounterMessage) -> WireError.Code? {
        do {
            _ = try message.message()
            return nil
        } catch {
            return error.code
        }
    }

    @Test("the golden vectors, both ways", arguments: MessageGoldenVectors.frames.map { ($0.name, $0.message, $0.hex) })
    func golden(name: String, message: BubblesAndCounterMessage, frame: String) throws {
        #expect(Vectors.hex(try StreamFraming.encode(try message.message())) == frame, "\(name)")
        #expect(try Self.decode(Vectors.bytes(hex: frame)) == message, "\(name)")
    }

    @Test("the spec lists exactly these golden vectors of the apps' kinds, and each kind in its kind table")
    func spec() throws {
        #expect(try Vectors.specRows() == Dictionary(uniqueKeysWithValues: Vectors.frames.map { ($0.name, $0.hex) }))
        #expect(Set(Vectors.frames.map(\.message.kind)) == Set(BubblesAndCounterMessage.Kind.allCases))
        let text = try String(contentsOf: Vectors.specURL, encoding: .utf8)
        for kind in BubblesAndCounterMessage.Kind.allCases {
            let row = "| `0x\(String(kind.rawValue, radix: 16))` | `\(kind)` |"
            #expect(text.contains(row), "missing \(row)")
        }
    }

    @Test("the spec's datagram carries two moves")
    func datagram() throws {
        let datagram = try Datagram.decode(Vectors.bytes(hex: Vectors.datagramHex))
        let moves = try datagram.messages.map { message throws(WireError) in try BubblesAndCounterMessage(message) }
        #expect(moves == Vectors.datagramMoves.map { .move($0) })
        let encoded = Datagram(
            header: datagram.header,
            messages: try Vectors.datagramMoves.map { move throws(WireError) in
                try BubblesAndCounterMessage.move(move).message()
            })
        #expect(Vectors.hex(try encoded.encode()) == Vectors.datagramHex)
    }

    @Test("a framed move is 13 bytes; a framed increment 3 bytes up to a count of 127, 4 up to 16383, 12 at most")
    func compactSizes() throws {
        let move = BubblesAndCounterMessage.move(Move(view: 255, x: .greatestFiniteMagnitude, y: -1, sequence: .max))
        #expect(try StreamFraming.frameSize(of: try move.message()) == 13)
        for (count, size) in [
            (BubblesAndCounterMessage.minIncrementCount, 3), (127, 3), (128, 4), (16_383, 4), (16_384, 5), (.max, 12),
        ] {
            let increment = BubblesAndCounterMessage.counterIncrement(count: count)
            #expect(try StreamFraming.frameSize(of: try increment.message()) == size, "count \(count)")
        }
    }

    @Test(
        "every proper prefix of a golden body is truncated; a byte more is trailing",
        arguments: MessageGoldenVectors.frames.map(\.hex))
    func prefixes(frame: String) {
        let bytes = Vectors.bytes(hex: frame)
        let kind = bytes[1]
        let body = Array(bytes.dropFirst(2))
        for length in 0..<body.count {
            #expect(Self.bodyError(kind, Array(body.prefix(length))) == .truncated, "prefix \(length) of \(frame)")
        }
        #expect(Self.bodyError(kind, body + [0x00]) == .trailingBytes)
    }

    @Test(
        "non-finite coordinates are rejected by the reader and refused by the writer",
        arguments: [Float.nan, .infinity, -.infinity, Float(bitPattern: 0x7FA0_0001)])
    func nonFinite(value: Float) {
        let bits = withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) }
        let finite = withUnsafeBytes(of: Float(1).bitPattern.littleEndian) { Array($0) }
        #expect(Self.bodyError(0x25, [0x01] + bits + finite + [0, 0]) == .nonFiniteCoordinate)
        #expect(Self.bodyError(0x25, [0x01] + finite + bits + [0, 0]) == .nonFiniteCoordinate)
        #expect(Self.bodyError(0x26, [0x01] + bits + finite) == .nonFiniteCoordinate)
        #expect(Self.bodyError(0x29, [0x01] + [UInt8](repeating: 0, count: 8) + finite + bits) == .nonFiniteCoordinate)
        #expect(Self.encodeError(.move(Move(view: 0, x: value, y: 0, sequence: 0))) == .nonFiniteCoordinate)
        #expect(Self.encodeError(.drop(Drop(view: 0, x: 0, y: value))) == .nonFiniteCoordinate)
    }

    @Test("fields, lists and values out of their limits, both ways")
    func limits() {
        let longName = String(repeating: "é", count: 32)  // 64 bytes
        #expect(Self.encodeError(.handshake(peerName: longName)) == .fieldTooLong)
        #expect(Self.bodyError(0x20, [64] + [UInt8](repeating: 0x61, count: 64)) == .fieldTooLong)
        #expect(Self.bodyError(0x20, [0x02, 0xC0, 0x80]) == .invalidUTF8)
        let layout = (0...BubblesAndCounterMessage.maxListEntries).map {
            LayoutEntry(peerID: PeerID(UInt64($0)), playerIndex: 0)
        }
        #expect(Self.encodeError(.layout(layout)) == .tooManyEntries)
        #expect(Self.bodyError(0x23, [0x81, 0x01]) == .tooManyEntries)  // 129 entries announced
        #expect(Self.bodyError(0x28, [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) == .tooManyEntries)
        #expect(Self.bodyError(0x23, [100]) == .truncated)  // more entries than bytes
        #expect(Self.bodyError(0x27, [0x00]) == .valueOutOfRange)  // an increment leads to a count of at least 1
        #expect(Self.bodyError(0x27, [0x80, 0x80, 0x00]) == .overlongVarint)
        #expect(Self.encodeError(.counterIncrement(count: 0)) == .valueOutOfRange)
        #expect(Self.encodeError(.bubbleState(BubbleState(view: 0, holder: PeerID(0), x: 0, y: 0))) == .valueOutOfRange)
        #expect(Self.bodyError(0x2A, []) == .unknownKind)
    }

    @Test("messages of other kinds are not the apps'; errors count offsets from the kind byte")
    func otherKinds() throws {
        #expect(try BubblesAndCounterMessage(.data([1])) == nil)
        #expect(try BubblesAndCounterMessage(.ack(sequence: 1)) == nil)
        do {
            _ = try BubblesAndCounterMessage(ApplicationMessage(kind: 0x20, body: [0x05, 0x61]))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .truncated)
            #expect(error.offset == 2)
            #expect(error.description.contains("peer name"))
        }
    }

    @Test("move sequences compare in serial-number order, wrapping at 2^16")
    func serialOrder() {
        #expect(Move.isNewer(1, than: 0))
        #expect(!Move.isNewer(0, than: 1))
        #expect(!Move.isNewer(5, than: 5))
        #expect(Move.isNewer(0, than: 65_535))
        #expect(Move.isNewer(10, than: 65_530))
        #expect(!Move.isNewer(65_530, than: 10))
        #expect(Move.isNewer(0x7FFF, than: 0))
        #expect(!Move.isNewer(0x8000, than: 0))
    }
}
