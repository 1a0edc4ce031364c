import Logging
import NIOCore
import WireCodec

/// What the core offers the applications it carries: sends by peer id and membership.
extension SessionCore: ApplicationContext {
    var displayName: String { configuration.displayName }

    var eventLoop: any EventLoop { loop }

    var connectedPeers: [PeerID] { peers.connected }

    func forEachMember(_ body: (PeerID) -> Void) {
        peers.forEachMember { body($0.id) }
    }

    func name(of peer: PeerID) -> String { peers[peer]?.name ?? "" }

    func sendReliably(_ message: Message, to peer: PeerID) throws(SessionError) {
        try message.checkSentByApplication()
        guard let record = peers[peer], takes(message, record) else { return }
        sender.sendSequenced(message, to: record, as: .state)
    }

    func sendReliablyToMembers(_ message: Message) throws(SessionError) {
        try message.checkSentByApplication()
        peers.forEachMember { if takes(message, $0) { sender.sendSequenced(message, to: $0, as: .state) } }
    }

    func sendToConnectedPeers(_ message: Message, reliably: Bool) throws(SessionError) {
        try message.checkSentByApplication()
        for peer in peers.all where peer.isConnected && takes(message, peer) {
            if reliably {
                sender.sendSequenced(message, to: peer, as: .state)
            } else {
                sender.sendUnreliable(message, to: peer)
            }
        }
    }

    /// Whether `peer` takes `message`: an `appMessage` only goes to peers whose hello announced them.
    private func takes(_ message: Message, _ peer: PeerRecord) -> Bool {
        guard case .appMessage = message else { return true }
        return peer.capabilities.contains(.appMessages)
    }
}
