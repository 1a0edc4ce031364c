import BubblesAndCounter
import WireCodec

/// What the events characteristic of the LE GATT face tells a subscribed central of the original apps
/// (docs/wire-format.md 4.2): each notification is one framed message of the apps.
public enum GATTEvent: Hashable, Sendable {
    /// A bubble moved, by anyone: a framed `move` (kind 0x25) with the move's sequence.
    case move(view: UInt8, x: Float, y: Float, sequence: UInt16)
    /// A bubble was taken or released: a framed `bubbleState` (kind 0x29); `holder` nil when nobody holds it.
    case bubble(view: UInt8, holder: PeerID?, x: Float, y: Float)
    /// A peer's count grew: a framed `counterState` (kind 0x28) with that one entry, the peer's total.
    case count(peer: PeerID, count: UInt64)

    /// The message the notification carries.
    public var message: BubblesAndCounterMessage {
        switch self {
        case .move(let view, let x, let y, let sequence): .move(Move(view: view, x: x, y: y, sequence: sequence))
        case .bubble(let view, let holder, let x, let y):
            .bubbleState(BubbleState(view: view, holder: holder, x: x, y: y))
        case .count(let peer, let count): .counterState([CounterEntry(peerID: peer, count: count)])
        }
    }

    /// The notification's value: the message, framed (a varint body length, then the body). Fails as the codec does
    /// on a coordinate that is not finite.
    public func payload() throws(WireError) -> [UInt8] {
        try message.frame()
    }
}
