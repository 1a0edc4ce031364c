import WireCodec

/// Bytes from the spec's hex notation ("0c 25 01").
func bytes(hex: String) -> [UInt8] {
    hex.split(separator: " ").map { UInt8($0, radix: 16)! }
}

/// The spec's hex notation of bytes.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
}

/// Decodes one whole frame that must fill `frame` exactly.
func decodeWholeFrame(_ frame: [UInt8], limits: WireLimits = .default) throws(WireError) -> Message? {
    let result: Result<(message: Message, length: Int)?, WireError> = frame.withUnsafeBytes { raw in
        Result { () throws(WireError) in try StreamFraming.decodeFrame(raw, limits: limits) }
    }
    guard let decoded = try result.get() else { return nil }
    precondition(decoded.length == frame.count, "frame has \(frame.count - decoded.length) bytes left over")
    return decoded.message
}

/// The error code a throwing expression ends in, or nil when it does not throw.
func errorCode<T>(_ body: () throws(WireError) -> T) -> WireError.Code? {
    do {
        _ = try body()
        return nil
    } catch {
        return error.code
    }
}

/// One message of every kind, with values away from the golden vectors' so both are exercised.
let oneOfEveryKind: [Message] = [
    .hello(
        Hello(
            protocolVersion: 7, peerID: PeerID(42), incarnation: .max,
            capabilities: Capabilities(rawValue: 0xFFFF_FFFF),
            datagramPort: .max, displayName: "Zoë's 🖥️", sessionName: "",
            extensions: [HelloExtension(type: 65535, value: [])])),
    .accept(Accept(linkToken: .max)),
    .resume(Resume(received: 0, nextSequence: .max)),
    .decline(DeclineReason(rawValue: 200)),
    .invitation(
        Invitation(context: [UInt8](repeating: 0xAB, count: Wire.maxInvitationContextLength), timeoutMilliseconds: 0)),
    .ping(Ping(nonce: .max, timestamp: .max, payload: [UInt8](repeating: 7, count: Wire.maxPingPayloadLength))),
    .pong(Ping(nonce: 0, timestamp: 0)),
    .bye(.protocolError),
    .ack(sequence: .max),
    .application(ApplicationMessage(kind: 0x20, body: [])),
    .application(ApplicationMessage(kind: 0x29, body: [UInt8](repeating: 0x29, count: Wire.maxDataLength))),
    .noise([UInt8](repeating: 0xA5, count: Wire.maxNoiseMessageLength)),
    .pairing(.request),
    .trust([GoldenVectors.statement, GoldenVectors.statement]),
    .members(
        (0..<Wire.maxMembers).map { index in
            Member(
                peerID: PeerID(UInt64(index) << 40), displayName: String(repeating: "m", count: Wire.maxNameLength),
                endpoints: (0..<Wire.maxMemberEndpoints).map { _ in
                    MemberEndpoint(
                        transport: String(repeating: "t", count: Wire.maxTransportNameLength),
                        host: String(repeating: "h", count: Wire.maxHostLength), port: .max)
                })
        }),
    .data([UInt8](repeating: 0xD7, count: Wire.maxDataLength)),
    .appMessage(AppMessage(app: 255, bytes: [UInt8](repeating: 0xA5, count: Wire.maxDataLength))),
    .durableData(DurableData(id: .max, bytes: [UInt8](repeating: 0x5A, count: Wire.maxDataLength))),
    .streamOpen(
        StreamOpen(
            id: .max, kind: .resource, name: String(repeating: "n", count: Wire.maxStreamNameLength), size: .max,
            resumeKey: [UInt8](repeating: 0xFF, count: Wire.resumeKeyLength))),
    .streamChunk(StreamChunk(id: .max, offset: .max, bytes: [UInt8](repeating: 0xC4, count: Wire.maxChunkLength))),
    .streamCredit(StreamCredit(id: .max, received: .max, limit: .max)),
    .streamEnd(
        StreamEnd(
            id: .max, fromOpener: false, status: StreamStatus(rawValue: 255),
            digest: [UInt8](repeating: 0xAB, count: Wire.digestLength),
            reason: String(repeating: "r", count: Wire.maxStreamReasonLength))),
]
