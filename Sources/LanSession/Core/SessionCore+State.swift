import NIOCore
import WireCodec

/// What ``Session`` asks of the core: snapshots and actions, each one call on the loop. What concerns one component
/// only (the listening endpoints, static endpoints, invitations waiting, trust) `Session` asks that component.
extension SessionCore {
    /// Every peer the session knows, by peer id.
    func peerInfos() -> [PeerInfo] {
        peers.all.map { info(of: $0) }.sorted { $0.peerID < $1.peerID }
    }

    /// The member `wanted` names (its peer id in hex, or its display name: of members that share it, the lower id),
    /// past discovery.
    func member(named wanted: String) -> PeerInfo? {
        if let id = PeerID(hex: wanted), id.description == wanted.lowercased(), let peer = peers[id],
            peer.state != .discovered
        {
            return info(of: peer)
        }
        return peers.all.filter { $0.state != .discovered && $0.name == wanted }.min { $0.id < $1.id }.map(info(of:))
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
