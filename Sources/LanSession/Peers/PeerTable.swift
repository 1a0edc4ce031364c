import WireCodec

/// Every peer the session knows, by id: those it links to, and those discovery, members or the application name.
final class PeerTable {
    private let replayBufferMessages: Int
    private let replayBufferBytes: Int
    private var peers: [PeerID: PeerRecord] = [:]

    init(replayBufferMessages: Int, replayBufferBytes: Int) {
        self.replayBufferMessages = replayBufferMessages
        self.replayBufferBytes = replayBufferBytes
    }

    subscript(id: PeerID) -> PeerRecord? { peers[id] }

    /// The record of `id`, made now if it has none.
    func record(for id: PeerID) -> PeerRecord {
        if let peer = peers[id] { return peer }
        let peer = PeerRecord(
            id: id, replayBufferMessages: replayBufferMessages, replayBufferBytes: replayBufferBytes)
        peers[id] = peer
        return peer
    }

    /// The peer `link` belongs to: once its hello was admitted, and while it is one of the peer's links.
    func peer(of link: Link) -> PeerRecord? {
        guard let id = link.peerID, let peer = peers[id], peer.links[ObjectIdentifier(link)] === link else {
            return nil
        }
        return peer
    }

    /// Forgets `peer`, if it is still the record of its id.
    func remove(_ peer: PeerRecord) {
        if peers[peer.id] === peer { peers[peer.id] = nil }
    }

    /// Every record, in no order.
    var all: Dictionary<PeerID, PeerRecord>.Values { peers.values }

    /// Members (connected, or connected before and expected back), without an array: this runs per message.
    func forEachMember(_ body: (PeerRecord) -> Void) {
        for peer in peers.values where peer.isMember { body(peer) }
    }

    /// The members, in no order.
    var members: [PeerRecord] { peers.values.filter(\.isMember) }

    /// The ids of the peers connected now.
    var connected: [PeerID] { peers.values.filter(\.isConnected).map(\.id) }
}
