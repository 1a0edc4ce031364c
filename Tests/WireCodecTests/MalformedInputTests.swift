import Testing
import WireCodec

/// Every malformed input gives its typed error; none traps.
@Suite("Malformed input")
struct MalformedInputTests {
    func decodeBody(_ body: [UInt8]) -> WireError.Code? {
        errorCode { () throws(WireError) in try Message.decode(body: body) }
    }

    @Test("every proper prefix of every golden body is truncated", arguments: GoldenVectors.frames.map(\.hex))
    func truncatedBodies(frameHex: String) {
        let body = Self.body(ofFrame: frameHex)
        for length in 0..<body.count {
            #expect(decodeBody(Array(body.prefix(length))) == .truncated, "prefix \(length) of \(frameHex)")
        }
    }

    @Test("every proper prefix of a frame is incomplete, not an error", arguments: GoldenVectors.frames.map(\.hex))
    func incompleteFrames(frameHex: String) throws {
        let frame = bytes(hex: frameHex)
        for length in 0..<frame.count {
            #expect(try decodeWholeFrame(Array(frame.prefix(length))) == nil)
        }
    }

    @Test("a zero-length frame is truncated (a body holds at least its kind)")
    func emptyFrame() {
        #expect(errorCode { () throws(WireError) in try decodeWholeFrame([0x00]) } == .truncated)
    }

    @Test("a length above the default limit is refused from the header alone")
    func frameTooLongDefault() {
        // 65537 = 0x10001 → 81 80 04
        #expect(errorCode { () throws(WireError) in try decodeWholeFrame([0x81, 0x80, 0x04]) } == .frameTooLong)
        // exactly the limit is fine (incomplete until the body arrives)
        #expect(errorCode { () throws(WireError) in try decodeWholeFrame([0x80, 0x80, 0x04]) } == nil)
    }

    @Test("a partial length already above a configured limit is refused early")
    func frameTooLongConfigured() {
        let limits = WireLimits(maxFrameLength: 100)
        #expect(errorCode { () throws(WireError) in try decodeWholeFrame([0x65], limits: limits) } == .frameTooLong)
        #expect(errorCode { () throws(WireError) in try decodeWholeFrame([0xE5], limits: limits) } == .frameTooLong)
        #expect(errorCode { () throws(WireError) in try decodeWholeFrame([0x64], limits: limits) } == nil)
    }

    @Test("the encoder refuses a frame above the limit")
    func encoderRespectsLimit() {
        let message = Message.application(ApplicationMessage(kind: 0x28, body: [UInt8](repeating: 1, count: 50)))
        let limits = WireLimits(maxFrameLength: 50)
        #expect(
            errorCode { () throws(WireError) in try StreamFraming.encode(message, limits: limits) } == .frameTooLong)
    }

    @Test(
        "over-long and non-shortest varints",
        arguments: [
            [0x03, 0x08, 0x80, 0x00],  // ack 0 in two bytes
            [0x0C, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],  // 11-byte u64
            [0x0B, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02],  // 2^65 - 1
            [0x07, 0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x00],  // nonce above UInt32.max
            [0x0B, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02],  // ack 2^65 - 1
            [0x80, 0x80, 0x80, 0x80, 0x01],  // a frame length of 5 bytes
            [0x81, 0x00, 0x08],  // frame length 1 written in two bytes
        ] as [[UInt8]])
    func overlongVarints(frame: [UInt8]) {
        #expect(errorCode { () throws(WireError) in try decodeWholeFrame(frame) } == .overlongVarint)
    }

    @Test("members past their limits are refused both ways")
    func membersLimits() {
        let member = Member(peerID: PeerID(1), displayName: "m", endpoints: [])
        let tooMany = Message.members(Array(repeating: member, count: Wire.maxMembers + 1))
        #expect(errorCode { () throws(WireError) in try StreamFraming.encode(tooMany) } == .tooManyEntries)
        let endpoint = MemberEndpoint(transport: "lan", host: "10.0.0.1", port: 1)
        var wide = member
        wide.endpoints = Array(repeating: endpoint, count: Wire.maxMemberEndpoints + 1)
        #expect(errorCode { () throws(WireError) in try StreamFraming.encode(.members([wide])) } == .tooManyEntries)
        var longHost = member
        longHost.endpoints = [MemberEndpoint(transport: "lan", host: String(repeating: "h", count: 64), port: 1)]
        #expect(errorCode { () throws(WireError) in try StreamFraming.encode(.members([longHost])) } == .fieldTooLong)
        #expect(decodeBody([0x0A, 0x41]) == .tooManyEntries)  // 65 members
        #expect(decodeBody([0x0A, 0x01, 1, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x05]) == .tooManyEntries)  // 5 endpoints
    }

    /// A golden frame's body: what follows its length varint.
    static func body(ofFrame hex: String) -> [UInt8] {
        let frame = bytes(hex: hex)
        let header = (frame.firstIndex { $0 & 0x80 == 0 } ?? 0) + 1
        return Array(frame.dropFirst(header))
    }

    @Test("unknown kinds", arguments: [0x00, 0x0E, 0x1F, 0x2A, 0x2F, 0x3F, 0x40, 0xFF] as [UInt8])
    func unknownKinds(kind: UInt8) {
        #expect(decodeBody([kind, 0x01, 0x02]) == .unknownKind)
    }

    @Test("trailing bytes after the last field", arguments: GoldenVectors.frames.map(\.hex))
    func trailingBytes(frameHex: String) {
        let body = Self.body(ofFrame: frameHex) + [0x00]
        #expect(decodeBody(body) == .trailingBytes)
    }

    @Test(
        "invalid UTF-8 in every string field",
        arguments: [
            [0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0x61, 0xF8, 0x88, 0x80, 0x80, 0x80],
        ] as [[UInt8]])
    func invalidUTF8(bad: [UInt8]) {
        let string = [UInt8(bad.count)] + bad
        // kind, version, peer id, incarnation, capabilities, datagram port
        let helloPrefix: [UInt8] = [0x01, 0x01] + [UInt8](repeating: 7, count: 16) + [0x00, 0x00]
        #expect(decodeBody(helloPrefix + string + [0x00, 0x00]) == .invalidUTF8)
        #expect(decodeBody(helloPrefix + [0x00] + string + [0x00]) == .invalidUTF8)
    }

    @Test("fields above their limits, both directions")
    func fieldsTooLong() {
        let longName = String(repeating: "é", count: 32)  // 64 bytes
        let hello64 = Message.hello(Hello(peerID: PeerID(1), displayName: longName, sessionName: "b"))
        #expect(errorCode { () throws(WireError) in try StreamFraming.encode(hello64) } == .fieldTooLong)
        let context = [UInt8](repeating: 1, count: Wire.maxInvitationContextLength + 1)
        #expect(
            errorCode { () throws(WireError) in try StreamFraming.encode(.invitation(Invitation(context: context))) }
                == .fieldTooLong)
        // 1025 = 81 08; refused before the 1025 bytes are even present.
        #expect(decodeBody([0x04, 0x81, 0x08]) == .fieldTooLong)
        let bigExtension = HelloExtension(type: 1, value: [UInt8](repeating: 0, count: 256))
        let hello = Message.hello(
            Hello(peerID: PeerID(1), displayName: "a", sessionName: "b", extensions: [bigExtension]))
        #expect(errorCode { () throws(WireError) in try StreamFraming.encode(hello) } == .fieldTooLong)
    }

    @Test("lists above their limits, both directions")
    func tooManyEntries() {
        #expect(decodeBody([0x0C, 0x41]) == .tooManyEntries)  // 65 statements announced
        let extensions = [HelloExtension](
            repeating: HelloExtension(type: 9, value: []), count: Wire.maxHelloExtensions + 1)
        let hello = Message.hello(Hello(peerID: PeerID(1), displayName: "a", sessionName: "b", extensions: extensions))
        #expect(errorCode { () throws(WireError) in try StreamFraming.encode(hello) } == .tooManyEntries)
    }

    @Test("a list count the remaining bytes cannot hold is truncated, not allocated")
    func countAboveRemainingBytes() {
        #expect(decodeBody([0x0A, 60]) == .truncated)  // 60 members in no bytes
    }

    @Test("values outside their ranges")
    func valuesOutOfRange() {
        let helloV0: [UInt8] = [0x01, 0x00] + [UInt8](repeating: 7, count: 16) + [0x00, 0x00, 0x00, 0x00, 0x00]
        #expect(decodeBody(helloV0) == .valueOutOfRange)
        let hello = Message.hello(Hello(protocolVersion: 0, peerID: PeerID(1), displayName: "", sessionName: ""))
        #expect(errorCode { () throws(WireError) in try StreamFraming.encode(hello) } == .valueOutOfRange)
        #expect(decodeBody([0x35, 0x00, 0x01, 0x61]) == .valueOutOfRange)  // application numbers start at 1
        let noApplication = Message.appMessage(AppMessage(app: 0, bytes: []))
        #expect(errorCode { () throws(WireError) in try StreamFraming.encode(noApplication) } == .valueOutOfRange)
        #expect(decodeBody([0x36, 0x00, 0x01, 0x61]) == .valueOutOfRange)  // durable ids start at 1
        let noDurableID = Message.durableData(DurableData(id: 0, bytes: []))
        #expect(errorCode { () throws(WireError) in try StreamFraming.encode(noDurableID) } == .valueOutOfRange)
    }

    @Test("errors say where and what")
    func errorDescription() {
        do {
            _ = try Message.decode(body: [0x04, 0x05, 0x61])
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .truncated)
            #expect(error.offset == 2)
            #expect(error.description.contains("invitation context"))
        }
    }
}
