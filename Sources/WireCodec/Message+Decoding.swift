extension Message {
    /// Decodes exactly one message body (kind byte and fields) that fills `body` completely.
    @inlinable
    public static func decode(body: UnsafeRawBufferPointer) throws(WireError) -> Message {
        var reader = ByteReader(body)
        let message = try read(from: &reader)
        guard reader.isAtEnd else {
            throw reader.error(.trailingBytes, "\(reader.remaining) bytes after \(message.kind)")
        }
        return message
    }

    /// Decodes exactly one message body from an array.
    public static func decode(body: [UInt8]) throws(WireError) -> Message {
        let result: Result<Message, WireError> = body.withUnsafeBytes { raw in
            Result { () throws(WireError) in try decode(body: raw) }
        }
        return try result.get()
    }

    @inlinable
    static func read(from reader: inout ByteReader) throws(WireError) -> Message {
        let kindOffset = reader.offset
        let kindByte = try reader.readByte("kind")
        guard let kind = MessageKind(rawValue: kindByte) else {
            throw reader.error(.unknownKind, "kind 0x\(String(kindByte, radix: 16))", at: kindOffset)
        }
        switch kind {
        case .hello:
            let versionOffset = reader.offset
            let version = UInt32(try reader.readVarint("protocol version", max: UInt64(UInt32.max)))
            guard version >= 1 else { throw reader.error(.valueOutOfRange, "protocol version 0", at: versionOffset) }
            let peerID = PeerID(rawValue: try reader.readUInt64LE("peer id"))
            let incarnation = try reader.readUInt64LE("incarnation")
            let capabilities = Capabilities(
                rawValue: UInt32(try reader.readVarint("capabilities", max: UInt64(UInt32.max))))
            let datagramPort = UInt16(try reader.readVarint("datagram port", max: UInt64(UInt16.max)))
            let displayName = try reader.readString("display name", maxLength: Wire.maxNameLength)
            let sessionName = try reader.readString("session name", maxLength: Wire.maxNameLength)
            let count = try reader.readCount("extensions", maxEntries: Wire.maxHelloExtensions, minEntryLength: 2)
            var extensions: [HelloExtension] = []
            extensions.reserveCapacity(count)
            for _ in 0..<count {
                let type = UInt16(try reader.readVarint("extension type", max: UInt64(UInt16.max)))
                let value = try reader.readBytes("extension value", maxLength: Wire.maxHelloExtensionLength)
                extensions.append(HelloExtension(type: type, value: value))
            }
            return .hello(
                Hello(
                    protocolVersion: version, peerID: peerID, incarnation: incarnation, capabilities: capabilities,
                    datagramPort: datagramPort, displayName: displayName, sessionName: sessionName,
                    extensions: extensions))
        case .accept:
            return .accept(Accept(linkToken: try reader.readUInt64LE("link token")))
        case .decline:
            return .decline(DeclineReason(rawValue: try reader.readByte("decline reason")))
        case .invitation:
            let context = try reader.readBytes("invitation context", maxLength: Wire.maxInvitationContextLength)
            let timeout = UInt32(try reader.readVarint("invitation timeout", max: UInt64(UInt32.max)))
            return .invitation(Invitation(context: context, timeoutMilliseconds: timeout))
        case .ping, .pong:
            let nonce = UInt32(try reader.readVarint("nonce", max: UInt64(UInt32.max)))
            let timestamp = try reader.readVarint("timestamp", max: UInt64.max)
            let payload = try reader.readBytes("ping payload", maxLength: Wire.maxPingPayloadLength)
            let ping = Ping(nonce: nonce, timestamp: timestamp, payload: payload)
            return kind == .ping ? .ping(ping) : .pong(ping)
        case .bye:
            return .bye(ByeReason(rawValue: try reader.readByte("bye reason")))
        case .ack:
            return .ack(sequence: try reader.readVarint("sequence", max: UInt64.max))
        case .resume:
            let received = try reader.readVarint("received", max: UInt64.max)
            let next = try reader.readVarint("next sequence", max: UInt64.max)
            return .resume(Resume(received: received, nextSequence: next))
        case .members:
            // The smallest member: peer id, empty name, no endpoints.
            let count = try reader.readCount("members", maxEntries: Wire.maxMembers, minEntryLength: 10)
            var members: [Member] = []
            members.reserveCapacity(count)
            for _ in 0..<count {
                let peerID = PeerID(rawValue: try reader.readUInt64LE("peer id"))
                let name = try reader.readString("member name", maxLength: Wire.maxNameLength)
                // The smallest endpoint: empty transport and host, a one-byte port.
                let endpointCount = try reader.readCount(
                    "member endpoints", maxEntries: Wire.maxMemberEndpoints, minEntryLength: 3)
                var endpoints: [MemberEndpoint] = []
                endpoints.reserveCapacity(endpointCount)
                for _ in 0..<endpointCount {
                    let transport = try reader.readString("transport", maxLength: Wire.maxTransportNameLength)
                    let host = try reader.readString("host", maxLength: Wire.maxHostLength)
                    let port = UInt16(try reader.readVarint("port", max: UInt64(UInt16.max)))
                    endpoints.append(MemberEndpoint(transport: transport, host: host, port: port))
                }
                members.append(Member(peerID: peerID, displayName: name, endpoints: endpoints))
            }
            return .members(members)
        case .noise:
            return .noise(try reader.readBytes("noise message", maxLength: Wire.maxNoiseMessageLength))
        case .trust:
            let count = try reader.readCount(
                "statements", maxEntries: Wire.maxTrustStatements, minEntryLength: TrustStatement.minEncodedLength)
            var statements: [TrustStatement] = []
            statements.reserveCapacity(count)
            for _ in 0..<count { statements.append(try TrustStatement.read(from: &reader)) }
            return .trust(statements)
        case .pairing:
            return .pairing(PairingStep(rawValue: try reader.readByte("pairing step")))
        case .application(let kind):
            return .application(ApplicationMessage(kind: kind, copying: reader.readRest()))
        case .data:
            return .data(try reader.readBytes("data", maxLength: Wire.maxDataLength))
        case .durableData:
            let idOffset = reader.offset
            let id = try reader.readVarint("durable id", max: UInt64.max)
            guard id != 0 else { throw reader.error(.valueOutOfRange, "durable id 0", at: idOffset) }
            return .durableData(
                DurableData(id: id, bytes: try reader.readBytes("durable data", maxLength: Wire.maxDataLength)))
        case .appMessage:
            let appOffset = reader.offset
            let app = try reader.readByte("application number")
            guard app != 0 else { throw reader.error(.valueOutOfRange, "application number 0", at: appOffset) }
            return .appMessage(
                AppMessage(app: app, bytes: try reader.readBytes("application message", maxLength: Wire.maxDataLength)))
        case .streamOpen:
            let id = UInt32(try reader.readVarint("stream id", max: UInt64(UInt32.max)))
            let kindOffset = reader.offset
            let streamKind = StreamKind(rawValue: try reader.readByte("stream kind"))
            guard streamKind.isKnown else {
                throw reader.error(.valueOutOfRange, "stream kind \(streamKind.rawValue)", at: kindOffset)
            }
            let name = try reader.readString("stream name", maxLength: Wire.maxStreamNameLength)
            let size = try reader.readVarint("stream size", max: UInt64.max)
            let key = try reader.readRaw("resume key", count: Wire.resumeKeyLength)
            return .streamOpen(StreamOpen(id: id, kind: streamKind, name: name, size: size, resumeKey: key))
        case .streamChunk:
            let id = UInt32(try reader.readVarint("stream id", max: UInt64(UInt32.max)))
            let offset = try reader.readVarint("chunk offset", max: UInt64.max)
            let bytes = try reader.readBytes("chunk", maxLength: Wire.maxChunkLength)
            return .streamChunk(StreamChunk(id: id, offset: offset, bytes: bytes))
        case .streamCredit:
            let id = UInt32(try reader.readVarint("stream id", max: UInt64(UInt32.max)))
            let received = try reader.readVarint("received", max: UInt64.max)
            let limitOffset = reader.offset
            let limit = try reader.readVarint("credit limit", max: UInt64.max)
            guard limit >= received else {
                throw reader.error(
                    .valueOutOfRange, "credit limit \(limit) below received \(received)", at: limitOffset)
            }
            return .streamCredit(StreamCredit(id: id, received: received, limit: limit))
        case .streamEnd:
            let id = UInt32(try reader.readVarint("stream id", max: UInt64(UInt32.max)))
            let sideOffset = reader.offset
            let side = try reader.readByte("stream side")
            guard side <= 1 else { throw reader.error(.valueOutOfRange, "stream side \(side)", at: sideOffset) }
            let status = StreamStatus(rawValue: try reader.readByte("stream status"))
            let digestOffset = reader.offset
            let digest = try reader.readBytes("digest", maxLength: Wire.digestLength)
            guard digest.isEmpty || digest.count == Wire.digestLength else {
                throw reader.error(.valueOutOfRange, "digest of \(digest.count) bytes", at: digestOffset)
            }
            let reason = try reader.readString("stream reason", maxLength: Wire.maxStreamReasonLength)
            return .streamEnd(
                StreamEnd(id: id, fromOpener: side == 0, status: status, digest: digest, reason: reason))
        }
    }
}
