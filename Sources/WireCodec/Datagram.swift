/// The fixed part of every datagram on the unreliable channel.
public struct DatagramHeader: Hashable, Sendable {
    /// The link's token from `accept`; datagrams with any other token are dropped by the receiver.
    public var linkToken: UInt64
    /// Per-link datagram counter, for loss statistics. Wraps.
    public var sequence: UInt32

    /// Creates a header.
    public init(linkToken: UInt64, sequence: UInt32) {
        self.linkToken = linkToken
        self.sequence = sequence
    }

    /// Bytes the header takes.
    @inlinable
    public var size: Int { Wire.linkTokenLength + ByteWriter.varintSize(UInt64(sequence)) }

    /// Reads the header at the start of a datagram (what follows is not looked at).
    public static func read(from bytes: UnsafeRawBufferPointer) throws(WireError) -> DatagramHeader {
        var reader = ByteReader(bytes)
        let token = try reader.readUInt64LE("link token")
        let sequence = UInt32(try reader.readVarint("datagram sequence", max: UInt64(UInt32.max)))
        return DatagramHeader(linkToken: token, sequence: sequence)
    }

    /// Writes the header at the start of `destination`, which holds at least ``size`` bytes; returns ``size``.
    @inlinable @discardableResult
    public func write(into destination: UnsafeMutableRawBufferPointer) -> Int {
        precondition(destination.count >= size, "destination holds \(destination.count) bytes, header needs \(size)")
        var writer = ByteWriter(destination)
        writer.writeUInt64LE(linkToken)
        writer.writeVarint(UInt64(sequence))
        return writer.offset
    }
}

/// One datagram: a header and one or more messages, each framed as on a stream.
public struct Datagram: Hashable, Sendable {
    /// The header.
    public var header: DatagramHeader
    /// The messages, in order.
    public var messages: [Message]

    /// Creates a datagram.
    public init(header: DatagramHeader, messages: [Message]) {
        self.header = header
        self.messages = messages
    }

    /// Encodes the datagram; it must hold at least one message and fit `Wire.maxDatagramLength`.
    public func encode() throws(WireError) -> [UInt8] {
        var builder = DatagramBuilder(header: header)
        for message in messages {
            guard try builder.append(message) else {
                throw WireError(
                    .datagramTooLarge, detail: "messages exceed \(Wire.maxDatagramLength) bytes at \(message.kind)")
            }
        }
        return try builder.finish()
    }

    /// Decodes a whole datagram; any malformed part rejects all of it.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(WireError) -> Datagram {
        var reader = try DatagramReader(bytes)
        var messages: [Message] = []
        while let message = try reader.next() { messages.append(message) }
        return Datagram(header: reader.header, messages: messages)
    }

    /// Decodes a whole datagram from an array.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> Datagram {
        let result: Result<Datagram, WireError> = bytes.withUnsafeBytes { raw in
            Result { () throws(WireError) in try decode(raw) }
        }
        return try result.get()
    }
}

/// Packs messages into one datagram until it is full.
public struct DatagramBuilder: Sendable {
    /// The datagram's header.
    public let header: DatagramHeader
    /// The bytes so far.
    public private(set) var bytes: [UInt8] = []
    /// Messages appended so far.
    public private(set) var messageCount = 0

    /// Starts a datagram.
    public init(header: DatagramHeader) {
        self.header = header
        bytes.reserveCapacity(Wire.maxDatagramLength)
        bytes.append(contentsOf: repeatElement(0, count: header.size))
        _ = bytes.withUnsafeMutableBytes { header.write(into: $0) }
    }

    /// Appends `message` if it fits; returns false, leaving the datagram unchanged, if it does not.
    public mutating func append(_ message: Message) throws(WireError) -> Bool {
        let size = try StreamFraming.frameSize(of: message)
        guard bytes.count + size <= Wire.maxDatagramLength else { return false }
        try StreamFraming.encode(message, into: &bytes)
        messageCount += 1
        return true
    }

    /// The finished datagram; throws `emptyDatagram` when no message was appended.
    public func finish() throws(WireError) -> [UInt8] {
        guard messageCount > 0 else {
            throw WireError(.emptyDatagram, detail: "a datagram carries at least one message")
        }
        return bytes
    }
}

/// Reads a datagram's header, then its messages one at a time, without allocating for fixed-size messages.
public struct DatagramReader: ~Copyable {
    /// The datagram's header.
    public let header: DatagramHeader
    private let bytes: UnsafeRawBufferPointer
    private var offset: Int

    /// Reads the header; the datagram must fit `Wire.maxDatagramLength` and carry at least one message.
    public init(_ bytes: UnsafeRawBufferPointer) throws(WireError) {
        guard bytes.count <= Wire.maxDatagramLength else {
            throw WireError(
                .datagramTooLarge, detail: "datagram is \(bytes.count) bytes, limit \(Wire.maxDatagramLength)")
        }
        var reader = ByteReader(bytes)
        let token = try reader.readUInt64LE("link token")
        let sequence = UInt32(try reader.readVarint("datagram sequence", max: UInt64(UInt32.max)))
        guard !reader.isAtEnd else {
            throw reader.error(.emptyDatagram, "a datagram carries at least one message")
        }
        self.header = DatagramHeader(linkToken: token, sequence: sequence)
        self.bytes = bytes
        self.offset = reader.offset
    }

    /// The next message, or nil after the last one.
    public mutating func next() throws(WireError) -> Message? {
        guard offset < bytes.count else { return nil }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        let limits = WireLimits(maxFrameLength: Wire.maxDatagramLength)
        do throws(WireError) {
            guard let frame = try StreamFraming.decodeFrame(rest, limits: limits) else {
                throw WireError(.truncated, detail: "frame runs past the end of the datagram")
            }
            offset += frame.length
            return frame.message
        } catch {
            var located = error
            located.offset += offset
            throw located
        }
    }
}
