import SessionControl

extension EventResult {
    /// The event as one line for people.
    var humanText: String {
        let peer = peerID ?? "?"
        let who = name.map { "\($0) (\(peer))" } ?? peer
        let bubble = "bubble \(view.map(String.init) ?? "?")"
        switch event {
        case "peerConnected":
            return "peer connected: \(who)"
        case "peerLost":
            return "peer lost: \(who)"
        case "peerLeft":
            return "peer left: \(who)" + (reason.map { ", \($0)" } ?? "")
        case "peerState":
            return "peer \(who) is \(state ?? "?")" + (address.map { " at \($0)" } ?? "")
        case "counter":
            return "counter: \(peer) at \(count.map(Output.times) ?? "?"), total \(total.map(Output.times) ?? "?")"
        case "pickUp":
            return "\(bubble): \(peer) asks to pick it up"
        case "holder":
            return "\(bubble): " + (holder.map { "held by \($0)" } ?? "free")
        case "move":
            return "\(bubble) moved to \(position) by \(peer)"
        case "drop":
            return "\(bubble) dropped at \(position) by \(peer)"
        case "layout":
            let players = (layout ?? [:]).sorted { ($0.value, $0.key) < ($1.value, $1.key) }
            return "layout: " + players.map { "player \($0.value) \($0.key)" }.joined(separator: ", ")
        case "invitation":
            return "invitation \(id.map(String.init) ?? "?") from \(who)"
        case "declined":
            let by = peerID.map { "\($0)" + (address.map { " at \($0)" } ?? "") } ?? address ?? "?"
            return "declined by \(by)" + (reason.map { ": \($0)" } ?? "")
        case "resynchronised":
            return "resynchronised with \(peer) after losing \(count.map(String.init) ?? "?") messages"
        case "unacknowledged":
            return
                "\(peer) restarted before acknowledging \(count.map(String.init) ?? "?") data messages: they may not have reached it"
        case "data":
            let body = text.map { Output.oneLine($0) } ?? "\(count.map(String.init) ?? "?") bytes (binary)"
            return "data from \(peer)\(channel == "unreliable" ? " (unreliable)" : ""): \(body)"
        case "streamOpened":
            return "stream \(id.map(String.init) ?? "?") \"\(name ?? "")\" opened by \(peer)"
        case "transfer":
            guard let transfer else { return "transfer" }
            let arrow = transfer.direction == "sending" ? "to" : "from"
            let head = "\(transfer.name) \(arrow) \(peer): \(transfer.bytes)/\(transfer.total) bytes"
            switch transfer.phase {
            case "finished":
                return "\(head), verified sha256 \(transfer.sha256 ?? "?")" + (transfer.path.map { " → \($0)" } ?? "")
            case "cancelled", "failed":
                return "\(head), \(transfer.phase): \(transfer.reason ?? "")"
            default:
                return "\(head), \(transfer.phase)"
            }
        case "peerChanged":
            return "peer \(peer): \(state ?? "?")"
        case "connectFailed":
            return "cannot connect to \(address ?? "?"): \(reason ?? "?") (retrying)"
        case "eventsMissed":
            return "missed \(count.map(String.init) ?? "?") events (this watcher fell behind)"
        default:
            return "\(event)" + (peerID.map { " \($0)" } ?? "")
        }
    }

    /// `(x, y)`.
    private var position: String {
        "(\(x.map(Output.coordinate) ?? "?"), \(y.map(Output.coordinate) ?? "?"))"
    }
}
