import PropertyBased
import Testing

@testable import WireCodec

/// An application's commands framed from their fields and read from their frames by the application
/// (`StreamFraming.encodeApplication`, `decodeApplicationFrame`, `shortApplicationFrame`): the bytes and the errors of
/// an `ApplicationMessage` carried by the general path, and every other frame read as the general path reads it.
@Suite("application frames written and read by the application")
struct ApplicationFrameTests {
    /// A body of `count` bytes that differ from each other and from their neighbours' positions.
    static func body(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: 0x5A &+ $0 &* 29) }
    }

    /// Body lengths around the inline capacity and the one-byte header's end.
    static let lengths = Array(0...20) + [125, 126, 127, 128, 300]

    /// An application's reader of every body as bytes, for the kinds in `kinds`.
    static func reader(
        _ kinds: ClosedRange<UInt8>
    ) -> (UInt8, inout ByteReader) throws(WireError) -> ApplicationMessage? {
        { kind, reader throws(WireError) in
            guard kinds.contains(kind) else { return nil }
            return ApplicationMessage(kind: kind, body: try reader.readRaw("body", count: reader.remaining))
        }
    }

    /// Decodes `frame` with an application that takes `kinds`.
    static func decode(
        _ frame: [UInt8], kinds: ClosedRange<UInt8> = MessageKind.applicationKinds, limits: WireLimits = .default,
        read: ((UInt8, inout ByteReader) throws(WireError) -> ApplicationMessage?)? = nil
    ) throws(WireError) -> (frame: ApplicationFrame<ApplicationMessage>, length: Int)? {
        let read = read ?? reader(kinds)
        let result = frame.withUnsafeBytes { raw in
            Result { () throws(WireError) in try StreamFraming.decodeApplicationFrame(raw, limits: limits, read: read) }
        }
        return try result.get()
    }

    /// The general path's error for `frame`, or nil when it decodes.
    static func generalError(_ frame: [UInt8], limits: WireLimits = .default) -> WireError? {
        let result = frame.withUnsafeBytes { raw in
            Result { () throws(WireError) in try StreamFraming.decodeFrame(raw, limits: limits) }
        }
        guard case .failure(let error) = result else { return nil }
        return error
    }

    @Test("a command written from its fields is the general path's frame, into memory and onto an array")
    func encode() throws {
        for kind in MessageKind.applicationKinds {
            for count in Self.lengths {
                let body = Self.body(count)
                let general = try StreamFraming.encode(.application(ApplicationMessage(kind: kind, body: body)))
                #expect(try StreamFraming.applicationFrameSize(bodySize: count) == general.count)
                var memory = [UInt8](repeating: 0xEE, count: general.count + 8)
                let written = try memory.withUnsafeMutableBytes { raw throws(WireError) in
                    try StreamFraming.encodeApplication(kind: kind, bodySize: count, into: raw) { $0.writeRaw(body) }
                }
                #expect(written == general.count && Array(memory[..<written]) == general, "kind \(kind), \(count)")
                #expect(memory[written...].allSatisfy { $0 == 0xEE })
                var array: [UInt8] = [0x01]
                try StreamFraming.encodeApplication(kind: kind, bodySize: count, into: &array) { $0.writeRaw(body) }
                #expect(array == [0x01] + general, "kind \(kind), \(count)")
            }
        }
    }

    @Test("a command above the frame limit or of no application kind is refused, and nothing is written")
    func encodeLimit() {
        let limits = WireLimits(maxFrameLength: 12)
        var memory = [UInt8](repeating: 0xEE, count: 32)
        #expect(throws: WireError(.frameTooLong, detail: "application body is 13 bytes, limit 12")) {
            try memory.withUnsafeMutableBytes { raw throws(WireError) in
                try StreamFraming.encodeApplication(kind: 0x25, bodySize: 12, into: raw, limits: limits) { _ in }
            }
        }
        #expect(throws: WireError(.valueOutOfRange, detail: "kind 48 is no application kind")) {
            try memory.withUnsafeMutableBytes { raw throws(WireError) in
                try StreamFraming.encodeApplication(kind: 0x30, bodySize: 1, into: raw) { $0.write(1) }
            }
        }
        #expect(memory.allSatisfy { $0 == 0xEE })
        #expect(
            errorCode { () throws(WireError) in try StreamFraming.applicationFrameSize(bodySize: 11, limits: limits) }
                == nil)
    }

    @Test("a command's frame is read straight into the application's command, the general path's body")
    func decodeCommands() throws {
        for kind in MessageKind.applicationKinds {
            for count in Self.lengths {
                let message = ApplicationMessage(kind: kind, body: Self.body(count))
                let frame = try StreamFraming.encode(.application(message))
                let decoded = try Self.decode(frame)
                #expect(decoded?.frame == .command(message), "kind \(kind), \(count)")
                #expect(decoded?.length == frame.count)
                // A frame cut anywhere needs more bytes, as on the general path.
                for cut in 0..<frame.count {
                    #expect(try Self.decode(Array(frame[..<cut])) == nil, "kind \(kind), \(count), cut at \(cut)")
                }
            }
        }
    }

    @Test("any other frame is the general path's message: the session's own kinds, the kinds it does not take")
    func decodeOthers() throws {
        for message in oneOfEveryKind {
            let frame = try StreamFraming.encode(message)
            let decoded = try Self.decode(frame, kinds: 0x20...0x22)
            if case .application(let command) = message, (0x20...0x22).contains(command.kind) {
                #expect(decoded?.frame == .command(command))
            } else {
                #expect(decoded?.frame == .other(message), "\(message.kind)")
            }
            #expect(decoded?.length == frame.count)
        }
    }

    @Test("a malformed frame fails as on the general path; a body left unread is trailing, counted from the frame")
    func decodeErrors() throws {
        for frame: [UInt8] in [
            [0x00], [0x80, 0x00], [0xFF, 0xFF, 0xFF, 0xFF, 0x01], [0x01, 0x2A], [0x81, 0x80, 0x80, 0x80, 0x01],
        ] {
            let error = Self.generalError(frame)
            #expect(error != nil)
            #expect(throws: error!) { try Self.decode(frame) }
        }
        let small = WireLimits(maxFrameLength: 12)
        for frame: [UInt8] in [[0x0D, 0x25], [0x0D, 0x25] + Self.body(12), [0x0D, 0x30] + Self.body(12)] {
            #expect(throws: Self.generalError(frame, limits: small)!) { try Self.decode(frame, limits: small) }
        }
        // Two bytes of the body read of five: the error counts from the frame's first byte.
        let frame: [UInt8] = [0x06, 0x24] + Self.body(5)
        let readTwo: (UInt8, inout ByteReader) throws(WireError) -> ApplicationMessage? = {
            kind, reader throws(WireError) in
            ApplicationMessage(kind: kind, body: try reader.readRaw("two", count: 2))
        }
        do {
            _ = try Self.decode(frame, read: readTwo)
            Issue.record("expected trailing bytes")
        } catch {
            #expect(error.code == .trailingBytes && error.offset == 4)
        }
        let readTooMuch: (UInt8, inout ByteReader) throws(WireError) -> ApplicationMessage? = {
            kind, reader throws(WireError) in
            ApplicationMessage(kind: kind, body: try reader.readRaw("six", count: 6))
        }
        do {
            _ = try Self.decode(frame, read: readTooMuch)
            Issue.record("expected a truncated body")
        } catch {
            #expect(error.code == .truncated && error.offset == 2)
        }
    }

    @Test("a short frame of an application kind gives its kind and fields; nothing else does")
    func short() throws {
        let frame = try StreamFraming.encode(.application(ApplicationMessage(kind: 0x25, body: Self.body(11))))
        let found = frame.withUnsafeBytes { raw in
            StreamFraming.shortApplicationFrame(raw).map { ($0.kind, Array($0.fields), $0.length) }
        }
        #expect(found?.0 == 0x25 && found?.1 == Self.body(11) && found?.2 == 13)
        let long = try StreamFraming.encode(.application(ApplicationMessage(kind: 0x25, body: Self.body(127))))
        let ack = try StreamFraming.encode(.ack(sequence: 5))
        for bytes in [long, ack, Array(frame.dropLast()), [0x00, 0x25], [0x01]] {
            #expect(bytes.withUnsafeBytes { StreamFraming.shortApplicationFrame($0) } == nil)
        }
        let small = WireLimits(maxFrameLength: 11)
        #expect(frame.withUnsafeBytes { StreamFraming.shortApplicationFrame($0, limits: small) } == nil)
    }

    @Test("any bytes, and any frame with a byte changed, read as the general path reads them, or fail as there")
    func sameAsGeneral() async {
        let mutated = Generator<[UInt8], Shrink.None<[UInt8]>> { rng in
            var frame = try! StreamFraming.encode(MessageGenerators.message(using: &rng))
            frame[Int.random(in: 0..<frame.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            return frame
        }
        for input in [MessageGenerators.garbage, mutated] {
            await propertyCheck(count: 3_000, input: input) { bytes in
                let general = bytes.withUnsafeBytes { raw in
                    Result { () throws(WireError) in try StreamFraming.decodeFrame(raw) }
                }
                let application = Result { () throws(WireError) in try Self.decode(bytes, kinds: 0x20...0x25) }
                switch (general, application) {
                case (.success(nil), .success(nil)): break
                case (.success(let message?), .success(let frame?)):
                    #expect(frame.length == message.length)
                    if case .application(let command) = message.message, command.kind <= 0x25 {
                        #expect(frame.frame == .command(command))
                    } else {
                        #expect(frame.frame == .other(message.message))
                    }
                case (.failure(let expected), .failure(let error)): #expect(error == expected)
                default: Issue.record("general \(general), application \(application)")
                }
            }
        }
    }
}
