extension Message {
    /// Size of the message body (kind byte and fields) in bytes, after checking every field against its limit.
    @inlinable
    public func bodySize() throws(WireError) -> Int {
        func string(_ value: String, _ field: String) throws(WireError) -> Int {
            let length = value.utf8.count
            guard length <= Wire.maxNameLength else {
                throw WireError(.fieldTooLong, detail: "\(field) is \(length) bytes, limit \(Wire.maxNameLength)")
            }
            return ByteWriter.varintSize(UInt64(length)) + length
        }
        func bounded(_ value: String, _ field: String, _ limit: Int) throws(WireError) -> Int {
            let length = value.utf8.count
            guard length <= limit else {
                throw WireError(.fieldTooLong, detail: "\(field) is \(length) bytes, limit \(limit)")
            }
            return ByteWriter.varintSize(UInt64(length)) + length
        }

        switch self {
        case .hello(let hello):
            guard hello.protocolVersion >= 1 else {
                throw WireError(.valueOutOfRange, detail: "protocol version 0")
            }
            guard hello.extensions.count <= Wire.maxHelloExtensions else {
                throw WireError(
                    .tooManyEntries,
                    detail: "hello has \(hello.extensions.count) extensions, limit \(Wire.maxHelloExtensions)")
            }
            var size = 1 + ByteWriter.varintSize(UInt64(hello.protocolVersion)) + 8 + 8
            size += ByteWriter.varintSize(UInt64(hello.capabilities.rawValue))
            size += ByteWriter.varintSize(UInt64(hello.datagramPort))
            size += try string(hello.displayName, "display name")
            size += try string(hello.sessionName, "session name")
            size += ByteWriter.varintSize(UInt64(hello.extensions.count))
            for item in hello.extensions {
                guard item.value.count <= Wire.maxHelloExtensionLength else {
                    throw WireError(
                        .fieldTooLong,
                        detail:
                            "extension \(item.type) is \(item.value.count) bytes, limit \(Wire.maxHelloExtensionLength)"
                    )
                }
                size += ByteWriter.varintSize(UInt64(item.type))
                size += ByteWriter.varintSize(UInt64(item.value.count)) + item.value.count
            }
            return size
        case .accept:
            return 1 + 8
        case .decline, .bye:
            return 2
        case .invitation(let invitation):
            let length = invitation.context.count
            guard length <= Wire.maxInvitationContextLength else {
                throw WireError(
                    .fieldTooLong,
                    detail: "invitation context is \(length) bytes, limit \(Wire.maxInvitationContextLength)")
            }
            return 1 + ByteWriter.varintSize(UInt64(length)) + length
                + ByteWriter.varintSize(UInt64(invitation.timeoutMilliseconds))
        case .ping(let ping), .pong(let ping):
            let length = ping.payload.count
            guard length <= Wire.maxPingPayloadLength else {
                throw WireError(
                    .fieldTooLong, detail: "ping payload is \(length) bytes, limit \(Wire.maxPingPayloadLength)")
            }
            return 1 + ByteWriter.varintSize(UInt64(ping.nonce)) + ByteWriter.varintSize(ping.timestamp)
                + ByteWriter.varintSize(UInt64(length)) + length
        case .ack(let sequence):
            return 1 + ByteWriter.varintSize(sequence)
        case .noise(let message):
            guard message.count <= Wire.maxNoiseMessageLength else {
                throw WireError(
                    .fieldTooLong,
                    detail: "noise message is \(message.count) bytes, limit \(Wire.maxNoiseMessageLength)")
            }
            return 1 + ByteWriter.varintSize(UInt64(message.count)) + message.count
        case .trust(let statements):
            guard statements.count <= Wire.maxTrustStatements else {
                throw WireError(
                    .tooManyEntries,
                    detail: "trust has \(statements.count) statements, limit \(Wire.maxTrustStatements)")
            }
            var size = 1 + ByteWriter.varintSize(UInt64(statements.count))
            for statement in statements {
                try statement.check()
                size += statement.encodedSize
            }
            return size
        case .pairing:
            return 2
        case .resume(let resume):
            return 1 + ByteWriter.varintSize(resume.received) + ByteWriter.varintSize(resume.nextSequence)
        case .application(let message):
            guard MessageKind.applicationKinds.contains(message.kind) else {
                throw WireError(.valueOutOfRange, detail: "kind \(message.kind) is no application kind")
            }
            return 1 + message.bodyCount
        case .members(let members):
            guard members.count <= Wire.maxMembers else {
                throw WireError(
                    .tooManyEntries, detail: "members has \(members.count) entries, limit \(Wire.maxMembers)")
            }
            var size = 1 + ByteWriter.varintSize(UInt64(members.count))
            for member in members {
                size += 8 + (try string(member.displayName, "member name"))
                guard member.endpoints.count <= Wire.maxMemberEndpoints else {
                    throw WireError(
                        .tooManyEntries,
                        detail: "member has \(member.endpoints.count) endpoints, limit \(Wire.maxMemberEndpoints)")
                }
                size += ByteWriter.varintSize(UInt64(member.endpoints.count))
                for endpoint in member.endpoints {
                    size += try bounded(endpoint.transport, "transport", Wire.maxTransportNameLength)
                    size += try bounded(endpoint.host, "host", Wire.maxHostLength)
                    size += ByteWriter.varintSize(UInt64(endpoint.port))
                }
            }
            return size
        case .data(let bytes):
            guard bytes.count <= Wire.maxDataLength else {
                throw WireError(.fieldTooLong, detail: "data is \(bytes.count) bytes, limit \(Wire.maxDataLength)")
            }
            return 1 + ByteWriter.varintSize(UInt64(bytes.count)) + bytes.count
        case .durableData(let durable):
            guard durable.id != 0 else { throw WireError(.valueOutOfRange, detail: "durable id 0") }
            guard durable.bytes.count <= Wire.maxDataLength else {
                throw WireError(
                    .fieldTooLong, detail: "durable data is \(durable.bytes.count) bytes, limit \(Wire.maxDataLength)")
            }
            return 1 + ByteWriter.varintSize(durable.id) + ByteWriter.varintSize(UInt64(durable.bytes.count))
                + durable.bytes.count
        case .appMessage(let message):
            guard message.app != 0 else { throw WireError(.valueOutOfRange, detail: "application number 0") }
            guard message.bytes.count <= Wire.maxDataLength else {
                throw WireError(
                    .fieldTooLong,
                    detail: "application message is \(message.bytes.count) bytes, limit \(Wire.maxDataLength)")
            }
            return 2 + ByteWriter.varintSize(UInt64(message.bytes.count)) + message.bytes.count
        case .streamOpen(let open):
            guard open.kind.isKnown else {
                throw WireError(.valueOutOfRange, detail: "stream kind \(open.kind.rawValue)")
            }
            guard open.resumeKey.count == Wire.resumeKeyLength else {
                throw WireError(
                    .valueOutOfRange,
                    detail: "resume key is \(open.resumeKey.count) bytes, must be \(Wire.resumeKeyLength)")
            }
            return 1 + ByteWriter.varintSize(UInt64(open.id)) + 1
                + (try bounded(open.name, "stream name", Wire.maxStreamNameLength))
                + ByteWriter.varintSize(open.size) + Wire.resumeKeyLength
        case .streamChunk(let chunk):
            guard chunk.bytes.count <= Wire.maxChunkLength else {
                throw WireError(
                    .fieldTooLong, detail: "chunk is \(chunk.bytes.count) bytes, limit \(Wire.maxChunkLength)")
            }
            return 1 + ByteWriter.varintSize(UInt64(chunk.id)) + ByteWriter.varintSize(chunk.offset)
                + ByteWriter.varintSize(UInt64(chunk.bytes.count)) + chunk.bytes.count
        case .streamCredit(let credit):
            guard credit.limit >= credit.received else {
                throw WireError(
                    .valueOutOfRange, detail: "credit limit \(credit.limit) below received \(credit.received)")
            }
            return 1 + ByteWriter.varintSize(UInt64(credit.id)) + ByteWriter.varintSize(credit.received)
                + ByteWriter.varintSize(credit.limit)
        case .streamEnd(let end):
            guard end.digest.isEmpty || end.digest.count == Wire.digestLength else {
                throw WireError(.valueOutOfRange, detail: "digest of \(end.digest.count) bytes")
            }
            return 1 + ByteWriter.varintSize(UInt64(end.id)) + 2 + 1 + end.digest.count
                + (try bounded(end.reason, "stream reason", Wire.maxStreamReasonLength))
        }
    }

    /// Writes the body; `writer` has room for exactly `bodySize()` more bytes, which was checked.
    @inlinable
    func writeBody(to writer: inout ByteWriter) {
        writer.write(kind.rawValue)
        switch self {
        case .hello(let hello):
            writer.writeVarint(UInt64(hello.protocolVersion))
            writer.writeUInt64LE(hello.peerID.rawValue)
            writer.writeUInt64LE(hello.incarnation)
            writer.writeVarint(UInt64(hello.capabilities.rawValue))
            writer.writeVarint(UInt64(hello.datagramPort))
            writer.writeString(hello.displayName)
            writer.writeString(hello.sessionName)
            writer.writeVarint(UInt64(hello.extensions.count))
            for item in hello.extensions {
                writer.writeVarint(UInt64(item.type))
                writer.writeBytes(item.value)
            }
        case .accept(let accept):
            writer.writeUInt64LE(accept.linkToken)
        case .members(let members):
            writer.writeVarint(UInt64(members.count))
            for member in members {
                writer.writeUInt64LE(member.peerID.rawValue)
                writer.writeString(member.displayName)
                writer.writeVarint(UInt64(member.endpoints.count))
                for endpoint in member.endpoints {
                    writer.writeString(endpoint.transport)
                    writer.writeString(endpoint.host)
                    writer.writeVarint(UInt64(endpoint.port))
                }
            }
        case .decline(let reason):
            writer.write(reason.rawValue)
        case .bye(let reason):
            writer.write(reason.rawValue)
        case .invitation(let invitation):
            writer.writeBytes(invitation.context)
            writer.writeVarint(UInt64(invitation.timeoutMilliseconds))
        case .ping(let ping), .pong(let ping):
            writer.writeVarint(UInt64(ping.nonce))
            writer.writeVarint(ping.timestamp)
            writer.writeBytes(ping.payload)
        case .ack(let sequence):
            writer.writeVarint(sequence)
        case .noise(let message):
            writer.writeBytes(message)
        case .trust(let statements):
            writer.writeVarint(UInt64(statements.count))
            for statement in statements { statement.write(into: &writer) }
        case .pairing(let step):
            writer.write(step.rawValue)
        case .resume(let resume):
            writer.writeVarint(resume.received)
            writer.writeVarint(resume.nextSequence)
        case .application(let message):
            message.withBody { writer.writeRaw($0) }
        case .data(let bytes):
            writer.writeBytes(bytes)
        case .appMessage(let message):
            writer.write(message.app)
            writer.writeBytes(message.bytes)
        case .durableData(let durable):
            writer.writeVarint(durable.id)
            writer.writeBytes(durable.bytes)
        case .streamOpen(let open):
            writer.writeVarint(UInt64(open.id))
            writer.write(open.kind.rawValue)
            writer.writeString(open.name)
            writer.writeVarint(open.size)
            writer.writeRaw(open.resumeKey)
        case .streamChunk(let chunk):
            writer.writeVarint(UInt64(chunk.id))
            writer.writeVarint(chunk.offset)
            writer.writeBytes(chunk.bytes)
        case .streamCredit(let credit):
            writer.writeVarint(UInt64(credit.id))
            writer.writeVarint(credit.received)
            writer.writeVarint(credit.limit)
        case .streamEnd(let end):
            writer.writeVarint(UInt64(end.id))
            writer.write(end.fromOpener ? 0 : 1)
            writer.write(end.status.rawValue)
            writer.writeBytes(end.digest)
            writer.writeString(end.reason)
        }
    }
}
