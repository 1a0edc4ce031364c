import WireCodec

/// A message of the original apps: kinds `0x20...0x29` of docs/wire-format.md 3.1, which the session carries as
/// ``ApplicationMessage``s without reading them; this module reads and writes their fields (sections 11.7 to 11.9).
public enum BubblesAndCounterMessage: Hashable, Sendable {
    /// See ``Kind/handshake``.
    case handshake(peerName: String)
    /// See ``Kind/negotiate``: a proposed player index and the proposer's timestamp.
    case negotiate(playerIndex: UInt8, timestamp: UInt64)
    /// See ``Kind/negotiateConfirm``.
    case negotiateConfirm(playerIndex: UInt8)
    /// See ``Kind/layout``: at most ``maxListEntries`` entries.
    case layout([LayoutEntry])
    /// See ``Kind/pickUp``.
    case pickUp(view: UInt8)
    /// See ``Kind/move``.
    case move(Move)
    /// See ``Kind/drop``.
    case drop(Drop)
    /// See ``Kind/counterIncrement``: the sender's own count after the increment, at least ``minIncrementCount``.
    case counterIncrement(count: UInt64)
    /// See ``Kind/counterState``: at most ``maxListEntries`` entries.
    case counterState([CounterEntry])
    /// See ``Kind/bubbleState``.
    case bubbleState(BubbleState)

    /// The kind bytes of the original apps' messages.
    public enum Kind: UInt8, Hashable, Sendable, CaseIterable {
        /// The original apps' greeting: the sender's name.
        case handshake = 0x20
        /// Proposes a player index.
        case negotiate = 0x21
        /// Confirms a player index.
        case negotiateConfirm = 0x22
        /// The player index of every peer.
        case layout = 0x23
        /// Picks a bubble up.
        case pickUp = 0x24
        /// Moves a held bubble.
        case move = 0x25
        /// Drops a bubble at its final position.
        case drop = 0x26
        /// The sender's own count after an increment (absolute, so that a replay or a relay is harmless).
        case counterIncrement = 0x27
        /// Every counter the sender knows, per peer, for merging.
        case counterState = 0x28
        /// A bubble's holder and position, as decided by the session's coordinator.
        case bubbleState = 0x29
    }

    /// Most entries in a `layout` or `counterState` list (`maxListEntries`).
    @inlinable public static var maxListEntries: Int { 128 }
    /// Smallest count a `counterIncrement` carries: an increment leads to a count of at least 1 (`minIncrementCount`).
    @inlinable public static var minIncrementCount: UInt64 { 1 }
    /// The kind bytes the apps take from the session.
    public static let kindBytes = Set(Kind.allCases.map(\.rawValue))

    /// The message's kind.
    @inlinable
    public var kind: Kind {
        switch self {
        case .handshake: .handshake
        case .negotiate: .negotiate
        case .negotiateConfirm: .negotiateConfirm
        case .layout: .layout
        case .pickUp: .pickUp
        case .move: .move
        case .drop: .drop
        case .counterIncrement: .counterIncrement
        case .counterState: .counterState
        case .bubbleState: .bubbleState
        }
    }

    /// Reads a message the session carried; nil for a message of another kind.
    ///
    /// - Throws: ``WireError`` for a malformed one, as the codec does for the session's own kinds (section 6).
    @inlinable @inline(__always)
    public init?(_ message: Message) throws(WireError) {
        guard case .application(let message) = message, let kind = Kind(rawValue: message.kind) else { return nil }
        self = try Self.read(kind, from: message)
    }

    /// The message as the session sends it, after checking every field against its limit.
    ///
    /// - Throws: ``WireError`` for a field the codec would refuse (a coordinate that is not finite, a list too long).
    @inlinable @inline(__always)
    public func message() throws(WireError) -> Message {
        .application(try applicationMessage())
    }
}
