import Foundation

/// One event of `watch`, typed: a case per event with its fields (docs/control-protocol.md, "Events").
///
/// On the socket it is one JSON object on one line, `"event"` naming it beside its fields and `time`, when the daemon
/// saw it. An event this program does not know (a newer daemon's) reads as ``other(_:)``.
public enum ControlEvent: Hashable, Sendable {
    case peerConnected(peerID: String, name: String)
    /// No link to the peer is left.
    case peerLost(peerID: String)
    /// The peer said bye.
    case peerLeft(peerID: String, reason: String)
    /// A link of the peer was added, became active or standby, or went away (`closed`).
    case linkChanged(peerID: String, transport: String, address: String, state: String)
    case peerState(peerID: String, name: String, state: String, address: String?)
    /// `connecting`, `connected`, or `not connected: ...`.
    case peerChanged(peerID: String, state: String)
    /// A `--peer` address refused or did not answer.
    case connectFailed(address: String, reason: String)
    case counter(peerID: String, count: UInt64, total: UInt64)
    /// A peer asked for a bubble.
    case pickUp(view: Int, peerID: String)
    /// The coordinator's decision: who holds the bubble (nil: free).
    case holder(view: Int, holder: String?)
    case move(view: Int, x: Double, y: Double, peerID: String)
    case drop(view: Int, x: Double, y: Double, peerID: String)
    /// Player index per peer id.
    case layout([String: Int])
    case invitation(id: UInt64, peerID: String, name: String)
    case declined(peerID: String?, address: String, reason: String)
    /// Messages the peer dropped from its replay buffer, replaced by a state merge.
    case resynchronised(peerID: String, count: UInt64)
    /// Data messages the peer's previous incarnation may or may not have delivered.
    case unacknowledged(peerID: String, count: UInt64)
    /// An application message (its `text` and `count` on the socket follow from the bytes).
    case data(peerID: String, data: Data, channel: ControlChannel)
    /// A batch of application messages, counted.
    case messages(peerID: String, count: UInt64, channel: ControlChannel)
    case streamOpened(peerID: String, name: String, id: UInt64)
    /// A resource transfer's progress (its `peerID` and `name` on the socket are the transfer's). Boxed: a transfer's
    /// fields inline (177 bytes) would make every event as large, the daemon's history of 10,000 events with them.
    indirect case transfer(TransferResult)
    /// Something an operator may want to know, in words.
    case notice(String)
    /// The peer holds a count for this one above this one's own (`total`).
    case countClaimedAbove(peerID: String, count: UInt64, total: UInt64)
    /// This watcher fell behind and that many events were not kept for it; or it asked for the events after a number
    /// the daemon's history no longer holds, or of a run before the daemon restarted (`restarted`): `count` of this
    /// run's were lost to it.
    case eventsMissed(count: UInt64, restarted: Bool = false)
    case pairingRequested(peerID: String, name: String, fingerprint: String, code: String)
    case paired(peerID: String, name: String, fingerprint: String)
    case pairingEnded(peerID: String, reason: String)
    /// A device got in on a trusted member's word (`by`, `holder` on the socket).
    case introduced(peerID: String, name: String, fingerprint: String, by: String?)
    /// The device was removed from the session by a member (`by`, `holder` on the socket).
    case unpaired(peerID: String, by: String)
    /// An event of another name: a newer daemon's.
    case other(String)

    /// The event's name on the socket.
    public var name: String {
        switch self {
        case .peerConnected: "peerConnected"
        case .peerLost: "peerLost"
        case .peerLeft: "peerLeft"
        case .linkChanged: "linkChanged"
        case .peerState: "peerState"
        case .peerChanged: "peerChanged"
        case .connectFailed: "connectFailed"
        case .counter: "counter"
        case .pickUp: "pickUp"
        case .holder: "holder"
        case .move: "move"
        case .drop: "drop"
        case .layout: "layout"
        case .invitation: "invitation"
        case .declined: "declined"
        case .resynchronised: "resynchronised"
        case .unacknowledged: "unacknowledged"
        case .data: "data"
        case .messages: "messages"
        case .streamOpened: "streamOpened"
        case .transfer: "transfer"
        case .notice: "notice"
        case .countClaimedAbove: "countClaimedAbove"
        case .eventsMissed: "eventsMissed"
        case .pairingRequested: "pairingRequested"
        case .paired: "paired"
        case .pairingEnded: "pairingEnded"
        case .introduced: "introduced"
        case .unpaired: "unpaired"
        case .other(let name): name
        }
    }
}

extension ControlEvent: Codable {
    /// Reads an event line; a `DecodingError` when a field its event has is missing.
    public init(from decoder: any Decoder) throws {
        let line = try ControlEventLine(from: decoder)
        guard let event = ControlEvent(line) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "\(line.event) lacks a field"))
        }
        self = event
    }

    /// Writes the event's line, without `time`.
    public func encode(to encoder: any Encoder) throws {
        try line.encode(to: encoder)
    }
}
