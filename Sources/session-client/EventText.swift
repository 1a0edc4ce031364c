import Foundation
import SessionControl

extension ControlEvent {
    /// The event as one line for people.
    var humanText: String {
        switch self {
        case .peerConnected(let peer, let name): "peer connected: \(name) (\(peer))"
        case .peerLost(let peer): "peer lost: \(peer)"
        case .peerLeft(let peer, let reason): "peer left: \(peer), \(reason)"
        case .peerState(let peer, let name, let state, let address):
            "peer \(name) (\(peer)) is \(state)" + (address.map { " at \($0)" } ?? "")
        case .counter(let peer, let count, let total):
            "counter: \(peer) at \(Output.times(count)), total \(Output.times(total))"
        case .pickUp(let view, let peer): "bubble \(view): \(peer) asks to pick it up"
        case .holder(let view, let holder): "bubble \(view): " + (holder.map { "held by \($0)" } ?? "free")
        case .move(let view, let x, let y, let peer): "bubble \(view) moved to \(Self.position(x, y)) by \(peer)"
        case .drop(let view, let x, let y, let peer): "bubble \(view) dropped at \(Self.position(x, y)) by \(peer)"
        case .layout(let layout):
            "layout: "
                + layout.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map { "player \($0.value) \($0.key)" }
                .joined(separator: ", ")
        case .invitation(let id, let peer, let name): "invitation \(id) from \(name) (\(peer))"
        case .declined(let peer, let address, let reason):
            "declined by \(peer.map { "\($0) at \(address)" } ?? address): \(reason)"
        case .resynchronised(let peer, let count): "resynchronised with \(peer) after losing \(count) messages"
        case .unacknowledged(let peer, let count):
            "\(peer) restarted before acknowledging \(count) data messages: they may not have reached it"
        case .data(let peer, let data, let channel):
            "data from \(peer)\(channel == .unreliable ? " (unreliable)" : ""): "
                + (String(validating: data, as: UTF8.self).map { Output.oneLine($0) } ?? "\(data.count) bytes (binary)")
        case .streamOpened(let peer, let name, let id): "stream \(id) \"\(name)\" opened by \(peer)"
        case .transfer(let transfer): Self.text(of: transfer)
        case .peerChanged(let peer, let state): "peer \(peer): \(state)"
        case .connectFailed(let address, let reason): "cannot connect to \(address): \(reason) (retrying)"
        case .eventsMissed(let count, false): "missed \(count) events (this watcher fell behind)"
        case .eventsMissed(let count, true):
            "sessiond restarted: the events of its previous run are gone"
                + (count > 0 ? ", and \(count) of this run's" : "")
        case .linkChanged(let peer, _, _, _), .messages(let peer, _, _), .countClaimedAbove(let peer, _, _),
            .pairingRequested(let peer, _, _, _),
            .paired(let peer, _, _), .pairingEnded(let peer, _), .introduced(let peer, _, _, _), .unpaired(let peer, _):
            "\(name) \(peer)"
        case .notice, .other: name
        }
    }

    /// A transfer's progress.
    private static func text(of transfer: TransferResult) -> String {
        let arrow = transfer.direction == "sending" ? "to" : "from"
        let head = "\(transfer.name) \(arrow) \(transfer.peerID): \(transfer.bytes)/\(transfer.total) bytes"
        switch transfer.phase {
        case "finished":
            return "\(head), verified sha256 \(transfer.sha256 ?? "?")" + (transfer.path.map { " → \($0)" } ?? "")
        case "cancelled", "failed":
            return "\(head), \(transfer.phase): \(transfer.reason ?? "")"
        default:
            return "\(head), \(transfer.phase)"
        }
    }

    /// `(x, y)`.
    private static func position(_ x: Double, _ y: Double) -> String {
        "(\(Output.coordinate(x)), \(Output.coordinate(y)))"
    }
}
