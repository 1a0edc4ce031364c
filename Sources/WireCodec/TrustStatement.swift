/// A signed statement about a device's membership (section 9.6 of docs/wire-format.md): a trusted member
/// introduces a device, or removes one. Statements travel in `trust` messages and in handshake payloads; a
/// receiver believes one only when its issuer is a device it trusts and the signature verifies.
public struct TrustStatement: Hashable, Sendable {
    /// What the statement says.
    public struct Verb: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        @inlinable
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The subject is a member: its keys are to be trusted.
        public static let introduce = Verb(rawValue: 1)
        /// The subject is no member any more: its links close and it is refused until introduced at a later version.
        public static let remove = Verb(rawValue: 2)
    }

    public var verb: Verb
    /// The subject's static X25519 public key (`Wire.publicKeyLength` bytes): what the Noise handshake proves.
    public var subjectKey: [UInt8]
    /// The subject's Ed25519 public key (`Wire.publicKeyLength` bytes), which signs its own statements; zeros in a
    /// removal.
    public var subjectSigningKey: [UInt8]
    /// The subject's display name, at most `Wire.maxNameLength` UTF-8 bytes (for people; not checked).
    public var subjectName: String
    /// Orders statements about one subject: the highest version wins, and a removal wins a tie.
    public var version: UInt64
    /// When the issuer made it, milliseconds since 1970 (for people; not used to order).
    public var time: UInt64
    /// The issuer's peer id.
    public var issuer: PeerID
    /// Ed25519 signature of ``signedBytes(sessionName:)`` by the issuer's signing key (`Wire.signatureLength`).
    public var signature: [UInt8]

    @inlinable
    public init(
        verb: Verb, subjectKey: [UInt8], subjectSigningKey: [UInt8], subjectName: String, version: UInt64,
        time: UInt64, issuer: PeerID, signature: [UInt8] = [UInt8](repeating: 0, count: Wire.signatureLength)
    ) {
        self.verb = verb
        self.subjectKey = subjectKey
        self.subjectSigningKey = subjectSigningKey
        self.subjectName = subjectName
        self.version = version
        self.time = time
        self.issuer = issuer
        self.signature = signature
    }

    /// Bytes of the statement as encoded, less the signature.
    @inlinable
    var unsignedSize: Int {
        1 + 2 * Wire.publicKeyLength + ByteWriter.varintSize(UInt64(subjectName.utf8.count)) + subjectName.utf8.count
            + ByteWriter.varintSize(version) + ByteWriter.varintSize(time) + 8
    }

    /// Bytes of the encoded statement.
    @inlinable
    var encodedSize: Int { unsignedSize + Wire.signatureLength }

    @inlinable
    func check() throws(WireError) {
        guard subjectKey.count == Wire.publicKeyLength, subjectSigningKey.count == Wire.publicKeyLength,
            signature.count == Wire.signatureLength
        else {
            throw WireError(.valueOutOfRange, detail: "a trust statement's keys are 32 bytes, its signature 64")
        }
        guard subjectName.utf8.count <= Wire.maxNameLength else {
            throw WireError(.fieldTooLong, detail: "subject name above \(Wire.maxNameLength) bytes")
        }
    }

    @inlinable
    func writeUnsigned(into writer: inout ByteWriter) {
        writer.write(verb.rawValue)
        writer.writeRaw(subjectKey)
        writer.writeRaw(subjectSigningKey)
        writer.writeString(subjectName)
        writer.writeVarint(version)
        writer.writeVarint(time)
        writer.writeUInt64LE(issuer.rawValue)
    }

    @inlinable
    func write(into writer: inout ByteWriter) {
        writeUnsigned(into: &writer)
        writer.writeRaw(signature)
    }

    /// The smallest encoded statement: an empty name, one-byte varints.
    @usableFromInline static let minEncodedLength = 1 + 2 * 32 + 1 + 1 + 1 + 8 + 64

    @inlinable
    static func read(from reader: inout ByteReader) throws(WireError) -> TrustStatement {
        let verb = Verb(rawValue: try reader.readByte("statement verb"))
        let subjectKey = try reader.readRaw("subject key", count: Wire.publicKeyLength)
        let signingKey = try reader.readRaw("subject signing key", count: Wire.publicKeyLength)
        let name = try reader.readString("subject name", maxLength: Wire.maxNameLength)
        let version = try reader.readVarint("statement version", max: UInt64.max)
        let time = try reader.readVarint("statement time", max: UInt64.max)
        let issuer = PeerID(rawValue: try reader.readUInt64LE("issuer"))
        let signature = try reader.readRaw("signature", count: Wire.signatureLength)
        return TrustStatement(
            verb: verb, subjectKey: subjectKey, subjectSigningKey: signingKey, subjectName: name, version: version,
            time: time, issuer: issuer, signature: signature)
    }

    /// What the issuer signs: the label `"LanSession v3 statement"`, the session name as a `string(63)`, then the
    /// statement's fields as encoded, without the signature. Binding the session keeps a statement from being
    /// replayed into another session.
    public func signedBytes(sessionName: String) throws(WireError) -> [UInt8] {
        try check()
        let label = Array(Wire.statementLabel.utf8)
        let session = Array(sessionName.utf8)
        guard session.count <= Wire.maxNameLength else {
            throw WireError(.fieldTooLong, detail: "session name above \(Wire.maxNameLength) bytes")
        }
        let size = label.count + ByteWriter.varintSize(UInt64(session.count)) + session.count + unsignedSize
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var writer = ByteWriter(UnsafeMutableRawBufferPointer(buffer))
            writer.writeRaw(label)
            writer.writeBytes(session)
            writeUnsigned(into: &writer)
            initialized = writer.offset
        }
    }
}

/// What each side puts in its Noise handshake message (message 2 for the responder, 3 for the initiator), encrypted
/// by the handshake: its signing key and the statements that introduce it.
public struct HandshakePayload: Hashable, Sendable {
    /// The sender's Ed25519 public key (`Wire.publicKeyLength` bytes).
    public var signingKey: [UInt8]
    /// Statements about the sender, at most `Wire.maxHandshakeStatements`: introductions by members, so that a
    /// member that has not heard of it yet can admit it on a trusted member's word.
    public var statements: [TrustStatement]

    public init(signingKey: [UInt8], statements: [TrustStatement] = []) {
        self.signingKey = signingKey
        self.statements = statements
    }

    /// The payload's bytes: `signingKey` (32 bytes, no prefix), `list(8, statement)`.
    public func encoded() throws(WireError) -> [UInt8] {
        guard signingKey.count == Wire.publicKeyLength else {
            throw WireError(.valueOutOfRange, detail: "signing key of \(signingKey.count) bytes")
        }
        guard statements.count <= Wire.maxHandshakeStatements else {
            throw WireError(.tooManyEntries, detail: "\(statements.count) statements in a handshake payload")
        }
        var size = Wire.publicKeyLength + ByteWriter.varintSize(UInt64(statements.count))
        for statement in statements {
            try statement.check()
            size += statement.encodedSize
        }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var writer = ByteWriter(UnsafeMutableRawBufferPointer(buffer))
            writer.writeRaw(signingKey)
            writer.writeVarint(UInt64(statements.count))
            for statement in statements { statement.write(into: &writer) }
            initialized = writer.offset
        }
    }

    /// Decodes a payload that fills `bytes` exactly.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> HandshakePayload {
        let result: Result<HandshakePayload, WireError> = bytes.withUnsafeBytes { raw in
            Result { () throws(WireError) in
                var reader = ByteReader(raw)
                let key = try reader.readRaw("signing key", count: Wire.publicKeyLength)
                let count = try reader.readCount(
                    "statements", maxEntries: Wire.maxHandshakeStatements,
                    minEntryLength: TrustStatement.minEncodedLength)
                var statements: [TrustStatement] = []
                for _ in 0..<count { statements.append(try TrustStatement.read(from: &reader)) }
                guard reader.isAtEnd else {
                    throw reader.error(.trailingBytes, "\(reader.remaining) bytes after the handshake payload")
                }
                return HandshakePayload(signingKey: key, statements: statements)
            }
        }
        return try result.get()
    }
}

/// A step of pairing two devices (kind `pairing`, section 9.5).
public struct PairingStep: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The sender asks to pair: each side shows the code derived from the handshake hash.
    public static let request = PairingStep(rawValue: 1)
    /// A person confirmed, on the sender's side, that the codes match.
    public static let confirm = PairingStep(rawValue: 2)
    /// A person rejected the pairing on the sender's side (or it timed out there).
    public static let reject = PairingStep(rawValue: 3)

    public var description: String {
        switch self {
        case .request: "request"
        case .confirm: "confirm"
        case .reject: "reject"
        default: "step \(rawValue)"
        }
    }
}
