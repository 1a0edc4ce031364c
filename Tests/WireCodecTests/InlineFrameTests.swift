import Testing

@testable import WireCodec

/// Frames of an application's command whose body is kept in place, written and read without the general path: the
/// same bytes and the same messages as the general path, and nothing else taken for one.
@Suite("application frames in place")
struct InlineFrameTests {
    /// A body of `count` bytes that differ from each other and from their neighbours' positions.
    static func body(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: 0xA5 &+ $0 &* 37) }
    }

    @Test("every body length written in place makes the general path's frame, and nothing past it")
    func encode() throws {
        for kind in MessageKind.applicationKinds {
            for count in 0...(ApplicationMessage.inlineCapacity + 1) {
                let message = Message.application(ApplicationMessage(kind: kind, body: Self.body(count)))
                let general = try StreamFraming.encode(message)
                var frame = [UInt8](repeating: 0xEE, count: general.count + 24)
                let written = try frame.withUnsafeMutableBytes { raw in
                    try StreamFraming.encode(message, into: raw)
                }
                #expect(written == general.count, "kind \(kind), \(count) bytes")
                #expect(Array(frame[..<written]) == general, "kind \(kind), \(count) bytes")
                #expect(frame[written...].allSatisfy { $0 == 0xEE }, "kind \(kind), \(count) bytes")
                let fast = frame.withUnsafeMutableBytes { raw in
                    StreamFraming.encodeInline(message, into: raw, limits: .default)
                }
                #expect((fast != nil) == (count <= ApplicationMessage.inlineCapacity))
            }
        }
    }

    @Test("every body length read in place gives the general path's message, its body byte for byte")
    func decode() throws {
        for kind in MessageKind.applicationKinds {
            for count in 0...(ApplicationMessage.inlineCapacity + 1) {
                let body = Self.body(count)
                let frame = try StreamFraming.encode(.application(ApplicationMessage(kind: kind, body: body)))
                let general = try frame.withUnsafeBytes { raw throws(WireError) in
                    try StreamFraming.decodeAnyFrame(raw, limits: .default)
                }
                let decoded = try frame.withUnsafeBytes { raw throws(WireError) in try StreamFraming.decodeFrame(raw) }
                #expect(decoded?.message == general?.message, "kind \(kind), \(count) bytes")
                #expect(decoded?.length == frame.count)
                guard case .application(let message) = decoded?.message else {
                    Issue.record("kind \(kind), \(count) bytes: not an application message")
                    continue
                }
                #expect(message.kind == kind && message.body == body, "kind \(kind), \(count) bytes")
                let fast = frame.withUnsafeBytes { StreamFraming.decodeInline($0, limits: .default) }
                #expect((fast != nil) == (count <= ApplicationMessage.inlineCapacity))
            }
        }
    }

    @Test("the session's own kinds, a cut frame, a frame above the limit and an empty body go the general way")
    func notInPlace() throws {
        let ack = try StreamFraming.encode(.ack(sequence: 5))
        #expect(ack.withUnsafeBytes { StreamFraming.decodeInline($0, limits: .default) } == nil)
        let move = try StreamFraming.encode(.application(ApplicationMessage(kind: 0x25, body: Self.body(11))))
        let cut = Array(move.dropLast())
        #expect(cut.withUnsafeBytes { StreamFraming.decodeInline($0, limits: .default) } == nil)
        #expect(try cut.withUnsafeBytes { raw throws(WireError) in try StreamFraming.decodeFrame(raw) } == nil)
        let small = WireLimits(maxFrameLength: 4)
        #expect(move.withUnsafeBytes { StreamFraming.decodeInline($0, limits: small) } == nil)
        #expect(throws: WireError.self) {
            try move.withUnsafeBytes { raw throws(WireError) in try StreamFraming.decodeFrame(raw, limits: small) }
        }
        let empty: [UInt8] = [0x00, 0x25]
        #expect(empty.withUnsafeBytes { StreamFraming.decodeInline($0, limits: .default) } == nil)
    }
}
