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

    /// Reads the body of `message`, whose kind is `kind`.
    @inlinable @inline(__always)
    static func read(_ kind: Kind, from message: ApplicationMessage) throws(WireError) -> Self {
        try message.read { reader throws(WireError) in try read(kind, from: &reader) }
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
            let view = try reader.readByte("view")
            let x = try reader.readCoordinate("x")
            let y = try reader.readCoordinate("y")
            let sequence = try reader.readUInt16LE("move sequence")
            return .move(Move(view: view, x: x, y: y, sequence: sequence))
        case .drop:
            let view = try reader.readByte("view")
            let x = try reader.readCoordinate("x")
            let y = try reader.readCoordinate("y")
            return .drop(Drop(view: view, x: x, y: y))
        case .counterIncrement:
            let countOffset = reader.offset
            let count = try reader.readVarint("count", max: UInt64.max)
            guard count >= minIncrementCount else {
                throw reader.error(.valueOutOfRange, "increment count 0", at: countOffset)
            }
            return .counterIncrement(count: count)
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

    /// The message as the session carries it: its kind byte and its body, after checking every field against its
    /// limit.
    ///
    /// - Throws: ``WireError`` for a field the codec would refuse: a coordinate that is not finite, a list or a name
    ///   above its limit, an increment count of 0, a holder given as peer id 0 instead of nil.
    @inlinable @inline(__always)
    public func applicationMessage() throws(WireError) -> ApplicationMessage {
        let size = try bodySize()
        return ApplicationMessage(kind: kind.rawValue, bodySize: size) { writer in write(to: &writer) }
    }

    /// The size of the body (the fields after the kind byte), after checking every field.
    @inlinable @inline(__always)
    func bodySize() throws(WireError) -> Int {
        func entries(_ count: Int, _ field: String) throws(WireError) -> Int {
            guard count <= Self.maxListEntries else {
                throw WireError(.tooManyEntries, detail: "\(field) has \(count) entries, limit \(Self.maxListEntries)")
            }
            return ByteWriter.varintSize(UInt64(count))
        }
        func coordinates(_ x: Float, _ y: Float) throws(WireError) {
            guard x.isFinite, y.isFinite else { throw WireError(.nonFiniteCoordinate, detail: "x=\(x) y=\(y)") }
        }
        switch self {
        case .handshake(let peerName):
            let length = peerName.utf8.count
            guard length <= Wire.maxNameLength else {
                throw WireError(.fieldTooLong, detail: "peer name is \(length) bytes, limit \(Wire.maxNameLength)")
            }
            return ByteWriter.varintSize(UInt64(length)) + length
        case .negotiate(_, let timestamp):
            return 1 + ByteWriter.varintSize(timestamp)
        case .negotiateConfirm, .pickUp:
            return 1
        case .layout(let layout):
            return (try entries(layout.count, "layout")) + layout.count * 9
        case .move(let move):
            try coordinates(move.x, move.y)
            return 11
        case .drop(let drop):
            try coordinates(drop.x, drop.y)
            return 9
        case .counterIncrement(let count):
            guard count >= Self.minIncrementCount else {
                throw WireError(.valueOutOfRange, detail: "increment count 0")
            }
            return ByteWriter.varintSize(count)
        case .counterState(let state):
            var size = try entries(state.count, "counter state")
            for entry in state { size += 8 + ByteWriter.varintSize(entry.count) }
            return size
        case .bubbleState(let bubble):
            guard bubble.holder != PeerID(0) else {
                throw WireError(.valueOutOfRange, detail: "peer id 0 means no holder; use nil")
            }
            try coordinates(bubble.x, bubble.y)
            return 17
        }
    }

    /// Writes the body; `writer` has room for exactly `bodySize()` bytes, which was checked.
    @inlinable @inline(__always)
    func write(to writer: inout ByteWriter) {
        switch self {
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
        case .counterState(let state):
            writer.writeVarint(UInt64(state.count))
            for entry in state {
                writer.writeUInt64LE(entry.peerID.rawValue)
                writer.writeVarint(entry.count)
            }
        case .bubbleState(let bubble):
            writer.write(bubble.view)
            writer.writeUInt64LE(bubble.holder?.rawValue ?? 0)
            writer.writeFloat(bubble.x)
            writer.writeFloat(bubble.y)
        }
    }
}
