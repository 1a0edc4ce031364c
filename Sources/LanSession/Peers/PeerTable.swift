import NIOCore
import WireCodec

/// Every peer the session knows, by id: those it links to, and those discovery, members or the application name;
/// which of a peer's links is to carry its data (the ``PathSelector`` decides), and the count of connection state
/// changes that readers off the loop watch.
final class PeerTable {
    private let replayBufferMessages: Int
    private let replayBufferBytes: Int
    private let pathSelector: PathSelector
    private let stateChanges: PeerStateChanges
    /// Looked up for every message; changed only between messages: not checked for exclusive access at run time.
    @exclusivity(unchecked) private var peers: [PeerID: PeerRecord] = [:]

    init(
        replayBufferMessages: Int, replayBufferBytes: Int, pathSelector: PathSelector, stateChanges: PeerStateChanges
    ) {
        self.replayBufferMessages = replayBufferMessages
        self.replayBufferBytes = replayBufferBytes
        self.pathSelector = pathSelector
        self.stateChanges = stateChanges
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

    /// The entries of its tables, by name (``Session/tableSizes()``): the records, and the links they hold.
    var tableSizes: [String: Int] {
        ["peers": peers.count, "peerLinks": peers.values.reduce(0) { $0 + $1.links.count }]
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

    /// The link to make `peer`'s active one now, if another than its active one should carry its data: when the
    /// active one died or went silent, or a clearly better one has proved itself.
    func pathToActivate(for peer: PeerRecord, now: NIODeadline) -> Link? {
        let candidates = peer.handshakenLinks.map { link in
            PathSelector.Candidate(
                id: ObjectIdentifier(link), transport: link.transport.name, rtt: link.rtt.smoothed,
                readySince: link.readySince ?? now, lastReceived: link.liveness.lastReceived)
        }
        let current = peer.active.map(ObjectIdentifier.init)
        guard case .activate(let id) = pathSelector.decide(active: current, candidates: candidates, now: now) else {
            return nil
        }
        return peer.links[id]
    }

    /// The connection state of `peer` to publish, if it changed since it was last published (counted for readers off
    /// the loop).
    func connectionChange(of peer: PeerRecord) -> PeerConnectionState? {
        guard let connection = peer.connectionStateToPublish() else { return nil }
        stateChanges.changed()
        return connection
    }

    /// Closes `id`'s active link abruptly, as a broken connection would (for tests and diagnostics).
    func dropActiveLink(to id: PeerID) {
        peers[id]?.active?.channel.close(promise: nil)
    }

    /// Where each peer stands.
    var states: [PeerID: PeerState] {
        var states: [PeerID: PeerState] = [:]
        for peer in peers.values { states[peer.id] = peer.state }
        return states
    }

    /// Where `id` stands for applications.
    func connectionState(of id: PeerID) throws(SessionError) -> PeerConnectionState {
        guard let peer = peers[id] else { throw noSuchMember(id) }
        return peer.connectionState
    }

    /// Members besides `peer`, and peers accepted whose link is not active yet: the seats taken (docs/wire-format.md,
    /// section 11.2), so that two invitations at once do not both take the last seat.
    func seatsTaken(besides peer: PeerID) -> Int {
        peers.values.reduce(0) { seats, other in
            other.id != peer && (other.isMember || !other.handshakenLinks.isEmpty) ? seats + 1 : seats
        }
    }

    /// The member `id`, or the error that names the members there are.
    func member(_ id: PeerID) throws(SessionError) -> PeerRecord {
        guard let peer = peers[id], peer.isMember else { throw noSuchMember(id) }
        return peer
    }

    func noSuchMember(_ id: PeerID) -> SessionError {
        let known = members.map { "\($0.name.isEmpty ? "?" : $0.name) (\($0.id))" }.sorted()
        return SessionError(
            .noSuchPeer,
            "\(id) is not a member of the session; members: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
    }

    /// The error for an unknown peer, naming the peers there are.
    func unknownPeer(_ id: PeerID) -> SessionError {
        let known = peers.values.map { "\($0.name.isEmpty ? "?" : $0.name) (\($0.id))" }.sorted()
        return SessionError(
            .noSuchPeer,
            "\(id) is not known (discover it, or connect to its address); known: "
                + (known.isEmpty ? "none" : known.joined(separator: ", ")))
    }
}
