import SessionControl

extension EventResult {
    /// The event as one line for people.
    var text: String {
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
        default:
            return "\(event)" + (peerID.map { " \($0)" } ?? "")
        }
    }

    /// `(x, y)`.
    private var position: String {
        "(\(x.map(Output.coordinate) ?? "?"), \(y.map(Output.coordinate) ?? "?"))"
    }
}
