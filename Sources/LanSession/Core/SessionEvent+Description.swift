extension SessionEvent: CustomStringConvertible {
    /// The event as one line for people, e.g. `data from 0123456789abcdef: 5 bytes, reliable`.
    public var description: String {
        switch self {
        case .peerChanged(let peer, let state): "peer \(peer): \(state)"
        case .peerState(let info): "peer \(info.peerID) \(info.name.isEmpty ? "" : "\"\(info.name)\" ")is \(info.state)"
        case .peerConnected(let peer, let name): "peer \(peer) \"\(name)\" connected"
        case .peerLost(let peer): "peer \(peer) lost"
        case .linkChanged(let peer, let link): "link of \(peer) on \(link.transport) \(link.address): \(link.state)"
        case .peerLeft(let peer, let reason): "peer \(peer) left (\(reason))"
        case .declined(let peer, let address, let reason):
            "declined by \(peer.map { "\($0) at " } ?? "")\(address): \(reason)"
        case .invitation(let request):
            "invitation \(request.id) from \(request.peerID) \"\(request.displayName)\" (\(request.context.count) bytes of context)"
        case .resynchronised(let peer, let lost): "resynchronised with \(peer) after losing \(lost) messages"
        case .unacknowledged(let peer, let messages):
            "\(peer) restarted before acknowledging \(messages) data messages: they may not have reached it"
        case .data(let peer, let bytes, let reliable):
            "data from \(peer): \(bytes.readableBytes) bytes, \(reliable ? "reliable" : "unreliable")"
        case .messages(let batch):
            "\(batch.count) messages from \(batch.from): \(batch.reduce(0) { $0 + $1.readableBytes }) bytes, "
                + (batch.reliable ? "reliable" : "unreliable")
        case .streamOpened(let stream): "\(stream) opened"
        case .transfer(let progress): "transfer \(progress)"
        case .connectFailed(let endpoint, let reason): "cannot connect to \(endpoint): \(reason)"
        case .notice(let notice): "\(notice)"
        case .eventsMissed(let count): "\(count) events missed (this reader fell behind)"
        case .pairingRequested(let request):
            "pairing \(request.requestedHere ? "asked of" : "asked by") \(request.peerID) \"\(request.displayName)\" (\(request.fingerprint)): code \(request.code)"
        case .paired(let device): "paired with \(device.peerID) \"\(device.name)\" (\(device.fingerprint))"
        case .pairingEnded(let peer, let reason): "pairing with \(peer) not made: \(reason)"
        case .introduced(let device):
            "\(device.peerID) \"\(device.name)\" introduced by \(device.introducedBy.map { "\($0)" } ?? "?")"
        case .unpaired(let peer, let by): "\(peer) removed by \(by)"
        }
    }
}
