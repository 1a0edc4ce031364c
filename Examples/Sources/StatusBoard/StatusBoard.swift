import LanSession
import NIOCore
import WireCodec

/// A status board: each peer has a line of status ("in a meeting", "coding"), and every member sees everyone's.
///
/// An application of its own inside a session, through the public `SessionApplication`: it takes application number
/// 1, so its messages reach its instances on the other peers and no other application. It greets every peer that
/// connects with its own status, so a late joiner sees the board at once, and forgets the status of a peer that goes.
final class StatusBoard: SessionApplication {
    /// What changed on the board.
    enum Change: Sendable {
        case status(PeerID, String)
        case gone(PeerID)
        case missed(Int)
    }

    static let number: UInt8 = 1
    let appNumbers: Set<UInt8> = [StatusBoard.number]
    unowned let context: any ApplicationContext
    let changes: EventFanout<Change>
    private(set) var statuses: [PeerID: String] = [:]
    private var mine = ""

    init(context: any ApplicationContext, changes: EventFanout<Change>) {
        self.context = context
        self.changes = changes
    }

    /// Sets this peer's status: every member gets it, also those away for now (the latest, when many were set).
    func set(_ status: String) {
        mine = status
        // An appMessage: the context refuses only the session's own kinds.
        try? context.sendReliablyToMembers(message(status))
    }

    func received(_ message: Message, from peer: PeerID, reliably: Bool) {
        guard case .appMessage(let status) = message else { return }
        statuses[peer] = String(decoding: status.bytes, as: UTF8.self)
        changes.yield(.status(peer, statuses[peer]!))
    }

    func peerConnected(_ peer: PeerID) {
        if !mine.isEmpty { try? context.sendReliably(message(mine), to: peer) }
    }

    /// Statuses set while the peer's replay buffer was full were held back: the latest one is all it needs.
    func peerMissedMessages(_ peer: PeerID) {
        if !mine.isEmpty { try? context.sendReliably(message(mine), to: peer) }
    }

    func membershipChanged() {
        let present = Set(context.connectedPeers)
        for peer in statuses.keys where !present.contains(peer) {
            statuses[peer] = nil
            changes.yield(.gone(peer))
        }
    }

    func sessionStopped() {
        changes.finish()
    }

    private func message(_ status: String) -> Message {
        .appMessage(AppMessage(app: Self.number, bytes: Array(status.utf8.prefix(Wire.maxDataLength))))
    }
}
