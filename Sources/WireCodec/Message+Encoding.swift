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
        func entries(_ count: Int, _ field: String) throws(WireError) -> Int {
            guard count <= Wire.maxListEntries else {
                throw WireError(.tooManyEntries, detail: "\(field) has \(count) entries, limit \(Wire.maxListEntries)")
            }
            return ByteWriter.varintSize(UInt64(count))
        }
        func coordinates(_ x: Float, _ y: Float) throws(WireError) {
            guard x.isFinite, y.isFinite else { throw WireError(.nonFiniteCoordinate, detail: "x=\(x) y=\(y)") }
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
        case .auth(let proof):
            guard proof.count == Wire.authProofLength else {
                throw WireError(
                    .valueOutOfRange, detail: "auth proof is \(proof.count) bytes, must be \(Wire.authProofLength)")
            }
            return 1 + proof.count
        case .resume(let resume):
            return 1 + ByteWriter.varintSize(resume.received) + ByteWriter.varintSize(resume.nextSequence)
        case .handshake(let peerName):
            return 1 + (try string(peerName, "peer name"))
        case .negotiate(_, let timestamp):
            return 2 + ByteWriter.varintSize(timestamp)
        case .negotiateConfirm, .pickUp:
            return 2
        case .layout(let layout):
            return 1 + (try entries(layout.count, "layout")) + layout.count * 9
        case .move(let move):
            try coordinates(move.x, move.y)
            return 12
        case .drop(let drop):
            try coordinates(drop.x, drop.y)
            return 10
        case .counterIncrement(let count):
            guard count >= Wire.minIncrementCount else {
                throw WireError(.valueOutOfRange, detail: "increment count 0")
            }
            return 1 + ByteWriter.varintSize(count)
        case .bubbleState(let bubble):
            guard bubble.holder != PeerID(0) else {
                throw WireError(.valueOutOfRange, detail: "peer id 0 means no holder; use nil")
            }
            try coordinates(bubble.x, bubble.y)
            return 18
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
        case .counterState(let state):
            var size = 1 + (try entries(state.count, "counter state"))
            for entry in state { size += 8 + ByteWriter.varintSize(entry.count) }
            return size
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
        case .auth(let proof):
            writer.writeRaw(proof)
        case .resume(let resume):
            writer.writeVarint(resume.received)
            writer.writeVarint(resume.nextSequence)
        case .handshake(let peerName):
            writer.writeString(peerName)
        case .negotiate(let playerIndex, let timestamp):
            writer.write(playerIndex)
            writer.writeVarint(timestamp)
        case .negotiateConfirm(let playerIndex):
            writer.write(playerIndex)
        case .layout(let layout):
            writer.writeVarint(UInt64(layout.count))
            for entry in layout {
                writer.writeUInt64LE(entry.peerID.rawValue)
                writer.write(entry.playerIndex)
            }
        case .pickUp(let view):
            writer.write(view)
        case .move(let move):
            writer.write(move.view)
            writer.writeFloat(move.x)
            writer.writeFloat(move.y)
            writer.writeUInt16LE(move.sequence)
        case .drop(let drop):
            writer.write(drop.view)
            writer.writeFloat(drop.x)
            writer.writeFloat(drop.y)
        case .counterIncrement(let count):
            writer.writeVarint(count)
        case .bubbleState(let bubble):
            writer.write(bubble.view)
            writer.writeUInt64LE(bubble.holder?.rawValue ?? 0)
            writer.writeFloat(bubble.x)
            writer.writeFloat(bubble.y)
        case .counterState(let state):
            writer.writeVarint(UInt64(state.count))
            for entry in state {
                writer.writeUInt64LE(entry.peerID.rawValue)
                writer.writeVarint(entry.count)
            }
        }
    }
}
