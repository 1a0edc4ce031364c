import Foundation

/// An event to and from its line.
extension ControlEvent {
    /// The event of a line; nil when a field its event has is missing.
    package init?(_ line: ControlEventLine) {
        let peer = line.peerID
        switch line.event {
        case "peerConnected":
            guard let peer, let name = line.name else { return nil }
            self = .peerConnected(peerID: peer, name: name)
        case "peerLost", "pickUp", "holder", "peerChanged", "peerLeft", "pairingEnded", "unpaired":
            guard let event = Self.ofOnePeer(line) else { return nil }
            self = event
        case "linkChanged":
            guard let peer, let transport = line.transport, let address = line.address, let state = line.state
            else { return nil }
            self = .linkChanged(peerID: peer, transport: transport, address: address, state: state)
        case "peerState":
            guard let peer, let name = line.name, let state = line.state else { return nil }
            self = .peerState(peerID: peer, name: name, state: state, address: line.address)
        case "connectFailed":
            guard let address = line.address, let reason = line.reason else { return nil }
            self = .connectFailed(address: address, reason: reason)
        case "counter", "countClaimedAbove":
            guard let peer, let count = line.count, let total = line.total else { return nil }
            self =
                line.event == "counter"
                ? .counter(peerID: peer, count: count, total: total)
                : .countClaimedAbove(peerID: peer, count: count, total: total)
        case "move", "drop":
            guard let peer, let view = line.view, let x = line.x, let y = line.y else { return nil }
            self =
                line.event == "move"
                ? .move(view: view, x: x, y: y, peerID: peer) : .drop(view: view, x: x, y: y, peerID: peer)
        case "layout": self = .layout(line.layout ?? [:])
        case "invitation":
            guard let peer, let id = line.id, let name = line.name else { return nil }
            self = .invitation(id: id, peerID: peer, name: name)
        case "declined":
            guard let address = line.address, let reason = line.reason else { return nil }
            self = .declined(peerID: peer, address: address, reason: reason)
        case "resynchronised", "unacknowledged":
            guard let peer, let count = line.count else { return nil }
            self =
                line.event == "resynchronised"
                ? .resynchronised(peerID: peer, count: count) : .unacknowledged(peerID: peer, count: count)
        case "data":
            guard let peer, let encoded = line.data, let data = Data(base64Encoded: encoded) else { return nil }
            self = .data(peerID: peer, data: data, channel: ControlChannel(rawValue: line.channel ?? "") ?? .reliable)
        case "messages":
            guard let peer, let count = line.count else { return nil }
            self = .messages(
                peerID: peer, count: count, channel: ControlChannel(rawValue: line.channel ?? "") ?? .reliable)
        case "streamOpened":
            guard let peer, let name = line.name, let id = line.id else { return nil }
            self = .streamOpened(peerID: peer, name: name, id: id)
        case "transfer":
            guard let transfer = line.transfer else { return nil }
            self = .transfer(transfer)
        case "notice": self = .notice(line.reason ?? "")
        case "eventsMissed": self = .eventsMissed(count: line.count ?? 0, restarted: line.restarted ?? false)
        case "pairingRequested":
            guard let peer, let name = line.name, let fingerprint = line.fingerprint, let code = line.code
            else { return nil }
            self = .pairingRequested(peerID: peer, name: name, fingerprint: fingerprint, code: code)
        case "paired", "introduced":
            guard let peer, let name = line.name, let fingerprint = line.fingerprint else { return nil }
            self =
                line.event == "paired"
                ? .paired(peerID: peer, name: name, fingerprint: fingerprint)
                : .introduced(peerID: peer, name: name, fingerprint: fingerprint, by: line.holder)
        default: self = .other(line.event)
        }
    }

    /// The events with one peer and one more field.
    private static func ofOnePeer(_ line: ControlEventLine) -> ControlEvent? {
        if line.event == "holder", let view = line.view { return .holder(view: view, holder: line.holder) }
        guard let peer = line.peerID else { return nil }
        switch line.event {
        case "peerLost": return .peerLost(peerID: peer)
        case "pickUp": return line.view.map { .pickUp(view: $0, peerID: peer) }
        case "peerChanged": return line.state.map { .peerChanged(peerID: peer, state: $0) }
        case "peerLeft": return line.reason.map { .peerLeft(peerID: peer, reason: $0) }
        case "pairingEnded": return line.reason.map { .pairingEnded(peerID: peer, reason: $0) }
        case "unpaired": return line.holder.map { .unpaired(peerID: peer, by: $0) }
        default: return nil
        }
    }

    /// The event's line (without `time`).
    package var line: ControlEventLine {
        var line = ControlEventLine(event: name)
        switch self {
        case .peerConnected(let peer, let name): (line.peerID, line.name) = (peer, name)
        case .peerLost(let peer): line.peerID = peer
        case .peerLeft(let peer, let reason), .pairingEnded(let peer, let reason):
            (line.peerID, line.reason) = (peer, reason)
        case .linkChanged(let peer, let transport, let address, let state):
            (line.peerID, line.transport, line.address, line.state) = (peer, transport, address, state)
        case .peerState(let peer, let name, let state, let address):
            (line.peerID, line.name, line.state) = (peer, name, state)
            line.address = address
        case .peerChanged(let peer, let state): (line.peerID, line.state) = (peer, state)
        case .connectFailed(let address, let reason): (line.address, line.reason) = (address, reason)
        case .counter(let peer, let count, let total), .countClaimedAbove(let peer, let count, let total):
            (line.peerID, line.count, line.total) = (peer, count, total)
        case .pickUp(let view, let peer): (line.view, line.peerID) = (view, peer)
        case .holder(let view, let holder):
            line.view = view
            line.holder = holder
        case .move(let view, let x, let y, let peer), .drop(let view, let x, let y, let peer):
            (line.view, line.x, line.y, line.peerID) = (view, x, y, peer)
        case .layout(let layout): line.layout = layout
        case .invitation(let id, let peer, let name): (line.id, line.peerID, line.name) = (id, peer, name)
        case .declined(let peer, let address, let reason):
            line.peerID = peer
            (line.address, line.reason) = (address, reason)
        case .resynchronised(let peer, let count), .unacknowledged(let peer, let count):
            (line.peerID, line.count) = (peer, count)
        case .data(let peer, let data, let channel):
            (line.peerID, line.data, line.count) = (peer, data.base64EncodedString(), UInt64(data.count))
            line.text = String(validating: data, as: UTF8.self)
            line.channel = channel.rawValue
        case .messages(let peer, let count, let channel):
            (line.peerID, line.count, line.channel) = (peer, count, channel.rawValue)
        case .streamOpened(let peer, let name, let id): (line.peerID, line.name, line.id) = (peer, name, id)
        case .transfer(let transfer):
            (line.peerID, line.name, line.transfer) = (transfer.peerID, transfer.name, transfer)
        case .notice(let reason): line.reason = reason
        case .eventsMissed(let count, let restarted):
            line.count = count
            if restarted { line.restarted = true }
        case .pairingRequested(let peer, let name, let fingerprint, let code):
            (line.peerID, line.name, line.fingerprint, line.code) = (peer, name, fingerprint, code)
        case .paired(let peer, let name, let fingerprint):
            (line.peerID, line.name, line.fingerprint) = (peer, name, fingerprint)
        case .introduced(let peer, let name, let fingerprint, let by):
            (line.peerID, line.name, line.fingerprint) = (peer, name, fingerprint)
            line.holder = by
        case .unpaired(let peer, let by): (line.peerID, line.holder) = (peer, by)
        case .other: break
        }
        return line
    }
}
