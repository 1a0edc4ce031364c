import WireCodec

/// The fields of each kind, as docs/wire-format.md 3.1 lays them out, read and written with the codec's
/// ``ByteReader`` and ``ByteWriter``.
extension BubblesAndCounterMessage {
    /// Reads `message`, whose kind must be one of ``Kind``.
    ///
    /// - Throws: ``WireError``: ``WireError/Code/unknownKind`` for another kind, or what section 6 says of a
    ///   malformed body.
    @inlinable
    public init(_ message: ApplicationMessage) throws(WireError) {
        guard let kind = Kind(rawValue: message.kind) else {
            throw WireError(.unknownKind, detail: "kind 0x\(String(message.kind, radix: 16))")
        }
        self = try Self.read(kind, from: message)
    }

    /// Reads the body of `message`, whose kind is `kind`: a move or an increment as a frame's are read
    /// (``readFrequent(_:_:)``), anything else, and what that refuses, by the general path.
    @inlinable @inline(__always)
    static func read(_ kind: Kind, from message: ApplicationMessage) throws(WireError) -> Self {
        if let frequent = message.withBody({ fields in readFrequent(kind.rawValue, fields) }) { return frequent }
        return try message.read { reader throws(WireError) in try read(kind, from: &reader) }
    }

    @inlinable @inline(__always)
    static func read(_ kind: Kind, from reader: inout ByteReader) throws(WireError) -> Self {
        switch kind {
        case .handshake:
            return .handshake(peerName: try reader.readString("peer name", maxLength: Wire.maxNameLength))
        case .negotiate:
            let index = try reader.readByte("player index")
            let timestamp = try reader.readVarint("timestamp", max: UInt64.max)
            return .negotiate(playerIndex: index, timestamp: timestamp)
        case .negotiateConfirm:
            return .negotiateConfirm(playerIndex: try reader.readByte("player index"))
        case .layout:
            let count = try reader.readCount("layout", maxEntries: maxListEntries, minEntryLength: 9)
            var layout: [LayoutEntry] = []
            layout.reserveCapacity(count)
            for _ in 0..<count {
                let peerID = PeerID(rawValue: try reader.readUInt64LE("peer id"))
                layout.append(LayoutEntry(peerID: peerID, playerIndex: try reader.readByte("player index")))
            }
            return .layout(layout)
        case .pickUp:
            return .pickUp(view: try reader.readByte("view"))
        case .move:
            return .move(try readMove(from: &reader))
        case .drop:
            let view = try reader.readByte("view")
            let x = try reader.readCoordinate("x")
            let y = try reader.readCoordinate("y")
            return .drop(Drop(view: view, x: x, y: y))
        case .counterIncrement:
            return .counterIncrement(count: try readIncrementCount(from: &reader))
        case .counterState:
            let count = try reader.readCount("counter state", maxEntries: maxListEntries, minEntryLength: 9)
            var state: [CounterEntry] = []
            state.reserveCapacity(count)
            for _ in 0..<count {
                let peerID = PeerID(rawValue: try reader.readUInt64LE("peer id"))
                state.append(CounterEntry(peerID: peerID, count: try reader.readVarint("count", max: UInt64.max)))
            }
            return .counterState(state)
        case .bubbleState:
            let view = try reader.readByte("view")
            let holder = try reader.readUInt64LE("holder")
            let x = try reader.readCoordinate("x")
            let y = try reader.readCoordinate("y")
            return .bubbleState(BubbleState(view: view, holder: holder == 0 ? nil : PeerID(holder), x: x, y: y))
        }
    }

    /// The fields of a `move`: view, x, y, sequence.
    @inlinable @inline(__always)
    static func readMove(from reader: inout ByteReader) throws(WireError) -> Move {
        let view = try reader.readByte("view")
        let x = try reader.readCoordinate("x")
        let y = try reader.readCoordinate("y")
        let sequence = try reader.readUInt16LE("move sequence")
        return Move(view: view, x: x, y: y, sequence: sequence)
    }

    /// The field of a `counterIncrement`: the count, at least ``minIncrementCount``.
    @inlinable @inline(__always)
    static func readIncrementCount(from reader: inout ByteReader) throws(WireError) -> UInt64 {
        let countOffset = reader.offset
        let count = try reader.readVarint("count", max: UInt64.max)
        guard count >= minIncrementCount else {
            throw reader.error(.valueOutOfRange, "increment count 0", at: countOffset)
        }
        return count
    }

    /// A well-formed move or increment of `fields`, the fields after a kind byte `kind`; nil for anything else, which
    /// the general path reads (and refuses). The messages sent many times a second, read with their fixed layout
    /// ahead of the general path's switch over every kind.
    @inlinable @inline(__always)
    static func readFrequent(_ kind: UInt8, _ fields: UnsafeRawBufferPointer) -> Self? {
        switch kind {
        case Kind.move.rawValue:
            // View, x, y and sequence at their fixed offsets, as readMove(from:) reads them.
            guard fields.count == moveBodySize else { return nil }
            let x = Float(bitPattern: UInt32(littleEndian: fields.loadUnaligned(fromByteOffset: 1, as: UInt32.self)))
            let y = Float(bitPattern: UInt32(littleEndian: fields.loadUnaligned(fromByteOffset: 5, as: UInt32.self)))
            guard x.isFinite, y.isFinite else { return nil }
            let sequence = UInt16(littleEndian: fields.loadUnaligned(fromByteOffset: 9, as: UInt16.self))
            return .move(Move(view: fields[0], x: x, y: y, sequence: sequence))
        case Kind.counterIncrement.rawValue:
            var reader = ByteReader(fields)
            guard let count = try? readIncrementCount(from: &reader), reader.isAtEnd else { return nil }
            return .counterIncrement(count: count)
        default:
            return nil
        }
    }

    /// The size of a `move`'s fields.
    @inlinable static var moveBodySize: Int { 11 }

    /// Writes the fields of a `move`, whose coordinates were checked.
    @inlinable @inline(__always)
    static func write(_ move: Move, to writer: inout ByteWriter) {
        writer.write(move.view)
        writer.writeFloat(move.x)
        writer.writeFloat(move.y)
        writer.writeUInt16LE(move.sequence)
    }

    /// The message as the session carries it: its kind byte and its body, after checking every field against its
    /// limit.
    ///
    /// - Throws: ``WireError`` for a field the codec would refuse: a coordinate that is not finite, a list or a name
    ///   above its limit, an increment count of 0, a holder given as peer id 0 instead of nil.
    @inlinable @inline(__always)
    public func applicationMessage() throws(WireError) -> ApplicationMessage {
        try encode { kind, size, write in ApplicationMessage(kind: kind, bodySize: size, write: write) }
    }

    /// Checks every field against its limit, then hands `encode` the kind byte, the size of the body (the fields after
    /// the kind byte) and what writes the body into a writer with room for exactly that size: one switch over the kinds
    /// decides all three, for an ``ApplicationMessage`` and for a frame alike.
    @inlinable @inline(__always)
    func encode<Result>(
        _ encode: (_ kind: UInt8, _ bodySize: Int, _ write: (inout ByteWriter) -> Void) throws(WireError) -> Result
    ) throws(WireError) -> Result {
        switch self {
        case .handshake(let peerName):
            let length = peerName.utf8.count
            guard length <= Wire.maxNameLength else {
                throw WireError(.fieldTooLong, detail: "peer name is \(length) bytes, limit \(Wire.maxNameLength)")
            }
            return try encode(Kind.handshake.rawValue, ByteWriter.varintSize(UInt64(length)) + length) { writer in
                writer.writeString(peerName)
            }
        case .negotiate(let playerIndex, let timestamp):
            return try encode(Kind.negotiate.rawValue, 1 + ByteWriter.varintSize(timestamp)) { writer in
                writer.write(playerIndex)
                writer.writeVarint(timestamp)
            }
        case .negotiateConfirm(let playerIndex):
            return try encode(Kind.negotiateConfirm.rawValue, 1) { writer in writer.write(playerIndex) }
        case .layout(let layout):
            let size = (try Self.entriesSize(layout.count, "layout")) + layout.count * 9
            return try encode(Kind.layout.rawValue, size) { writer in
                writer.writeVarint(UInt64(layout.count))
                for entry in layout {
                    writer.writeUInt64LE(entry.peerID.rawValue)
                    writer.write(entry.playerIndex)
                }
            }
        case .pickUp(let view):
            return try encode(Kind.pickUp.rawValue, 1) { writer in writer.write(view) }
        case .move(let move):
            try Self.checkCoordinates(move.x, move.y)
            return try encode(Kind.move.rawValue, Self.moveBodySize) { writer in Self.write(move, to: &writer) }
        case .drop(let drop):
            try Self.checkCoordinates(drop.x, drop.y)
            return try encode(Kind.drop.rawValue, 9) { writer in
                writer.write(drop.view)
                writer.writeFloat(drop.x)
                writer.writeFloat(drop.y)
            }
        case .counterIncrement(let count):
            guard count >= Self.minIncrementCount else {
                throw WireError(.valueOutOfRange, detail: "increment count 0")
            }
            return try encode(Kind.counterIncrement.rawValue, ByteWriter.varintSize(count)) { writer in
                writer.writeVarint(count)
            }
        case .counterState(let state):
            var size = try Self.entriesSize(state.count, "counter state")
            for entry in state { size += 8 + ByteWriter.varintSize(entry.count) }
            return try encode(Kind.counterState.rawValue, size) { writer in
                writer.writeVarint(UInt64(state.count))
                for entry in state {
                    writer.writeUInt64LE(entry.peerID.rawValue)
                    writer.writeVarint(entry.count)
                }
            }
        case .bubbleState(let bubble):
            guard bubble.holder != PeerID(0) else {
                throw WireError(.valueOutOfRange, detail: "peer id 0 means no holder; use nil")
            }
            try Self.checkCoordinates(bubble.x, bubble.y)
            return try encode(Kind.bubbleState.rawValue, 17) { writer in
                writer.write(bubble.view)
                writer.writeUInt64LE(bubble.holder?.rawValue ?? 0)
                writer.writeFloat(bubble.x)
                writer.writeFloat(bubble.y)
            }
        }
    }

    /// The size of a list's count, after checking it against ``maxListEntries``.
    @inlinable
    static func entriesSize(_ count: Int, _ field: String) throws(WireError) -> Int {
        guard count <= maxListEntries else {
            throw WireError(.tooManyEntries, detail: "\(field) has \(count) entries, limit \(maxListEntries)")
        }
        return ByteWriter.varintSize(UInt64(count))
    }

    /// Refuses coordinates that are not finite.
    @inlinable @inline(__always)
    static func checkCoordinates(_ x: Float, _ y: Float) throws(WireError) {
        guard x.isFinite, y.isFinite else { throw WireError(.nonFiniteCoordinate, detail: "x=\(x) y=\(y)") }
    }
}
