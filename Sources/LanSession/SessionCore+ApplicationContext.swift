import WireCodec

/// What the core offers the applications it carries: sends by peer id, membership, events.
extension SessionCore: ApplicationContext {
    var isRunning: Bool { runState != .stopped }

    var connectedPeers: [PeerID] { peers.values.filter(\.isConnected).map(\.id) }

    var memberIDs: [PeerID] { peers.values.filter(\.isMember).map(\.id) }

    func name(of peer: PeerID) -> String { peers[peer]?.name ?? "" }

    func sendReliably(_ message: Message, to peer: PeerID) {
        guard let record = peers[peer] else { return }
        sendSequenced(message, to: record)
    }

    func sendReliablyToMembers(_ message: Message) {
        broadcastSequenced(message)
    }

    func sendUnreliably(_ message: Message, to peer: PeerID) {
        guard let record = peers[peer] else { return }
        sendUnreliable(message, to: record)
    }

    func emit(_ event: SessionEvent) {
        events.yield(event)
    }
}
