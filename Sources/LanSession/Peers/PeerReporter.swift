import NIOCore
import WireCodec

/// What the subscribers and ``Session`` see of the peers: each one's state and links as events when they change, and
/// snapshots on demand. It reads the tables it is given and changes nothing in them.
final class PeerReporter {
    private let peers: PeerTable
    private let dialler: Dialler
    private let datagrams: DatagramRouter
    private let events: SessionEventQueue
    /// The name of the transport that carries datagrams.
    private let carrierOfDatagrams: String

    init(
        peers: PeerTable, dialler: Dialler, datagrams: DatagramRouter, events: SessionEventQueue,
        carrierOfDatagrams: String
    ) {
        self.peers = peers
        self.dialler = dialler
        self.datagrams = datagrams
        self.events = events
        self.carrierOfDatagrams = carrierOfDatagrams
    }

    func info(of peer: PeerRecord) -> PeerInfo {
        PeerInfo(
            peer, endpoints: dialler.endpoints(of: peer.id), unreliable: datagrams.route(of: peer.id),
            transport: carrierOfDatagrams)
    }

    /// Tells the subscribers `peer`'s state, and its connection's change if there is one.
    func publishState(of peer: PeerRecord) {
        events.yield(.peerState(info(of: peer)))
        guard let connection = peers.connectionChange(of: peer) else { return }
        events.yield(.peerChanged(peer.id, connection))
    }

    /// Tells the subscribers what became of `link` (opened, its role changed, closed).
    func publishLink(_ link: Link, of peer: PeerRecord, closed: Bool = false) {
        var info = link.info
        if closed { info.state = .closed }
        events.yield(.linkChanged(peer.id, info))
    }

    /// Whether `peer` is redialled when lost: it did not leave, and the dialler knows where it is.
    func canRedial(_ peer: PeerRecord) -> Bool {
        !peer.left && dialler.hasEndpoints(peer.id)
    }

    // MARK: - Snapshots

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
