import WireCodec

/// What the core offers the applications it carries: sends by peer id, membership, events.
extension SessionCore: ApplicationContext {
    var isRunning: Bool { runState != .stopped }

    var connectedPeers: [PeerID] { peers.values.filter(\.isConnected).map(\.id) }

    func forEachMember(_ body: (PeerID) -> Void) {
        for peer in peers.values where peer.isMember { body(peer.id) }
    }

    func name(of peer: PeerID) -> String { peers[peer]?.name ?? "" }

    func sendReliably(_ message: Message, to peer: PeerID) {
        guard let record = peers[peer] else { return }
        sendSequenced(message, to: record)
    }

    func sendReliablyToMembers(_ message: Message) {
        broadcastSequenced(message)
    }

    func sendToConnectedPeers(_ message: Message, reliably: Bool) {
        for peer in peers.values where peer.isConnected {
            if reliably { sendSequenced(message, to: peer) } else { sendUnreliable(message, to: peer) }
        }
    }

    func emit(_ event: SessionEvent) {
        events.yield(event)
    }
}
