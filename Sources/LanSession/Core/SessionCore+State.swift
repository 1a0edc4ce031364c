import NIOCore
import WireCodec

/// What ``Session`` asks of the core: snapshots and small actions, each one call on the loop.
extension SessionCore {
    /// Starts the session unless it started already.
    func startIfIdle() -> EventLoopFuture<Void> {
        runState == .idle ? start().map { _ in } : loop.makeSucceededVoidFuture()
    }

    /// Where the session accepts links, one endpoint per listening transport.
    var listeningEndpoints: [Endpoint] {
        transports.compactMap { transport in
            listeners[transport.name].flatMap { transport.localEndpoint(of: $0, port: port) }
        }
    }

    /// Every peer the session knows, by peer id.
    func peerInfos() -> [PeerInfo] {
        peers.values.map { info(of: $0) }.sorted { $0.peerID < $1.peerID }
    }

    /// Where each peer stands.
    func peerStates() -> [PeerID: PeerState] {
        peers.mapValues(\.state)
    }

    func securityStatistics() -> SecurityStatistics {
        SecurityStatistics(
            encrypted: configuration.isEncrypted, failedHandshakes: failedAuthentications,
            droppedDatagrams: droppedDatagrams, refusedConnections: rejectedUnproven)
    }

    /// Invitations waiting for the application's answer, oldest first.
    func invitationRequests() -> [InvitationRequest] {
        pendingInvitations.values.map(\.request).sorted { $0.id < $1.id }
    }

    /// Closes `peer`'s active link abruptly.
    func dropActiveLink(to peer: PeerID) {
        peers[peer]?.active?.channel.close(promise: nil)
    }

    /// How each of `ids` can be reached now.
    func reach(of ids: Set<PeerID>) -> [PeerID: PeerReach] {
        var reach: [PeerID: PeerReach] = [:]
        for id in ids {
            guard let peer = peers[id] else {
                reach[id] = .unknown
                continue
            }
            reach[id] = peer.isConnected ? .connected : canRedial(peer) ? .known : .unknown
        }
        return reach
    }
}
