import Logging
import NIOCore
import WireCodec

/// Who is a member, as the peers tell one another: discovery records and the `members` messages (``MembersGossip``
/// decides what to send and when), turned into records the ``Dialler`` dials; and strangers forgotten once nothing
/// names them.
final class MembersExchange {
    private let localPeer: PeerID
    private let logger: Logger
    private let peers: PeerTable
    private let dialler: Dialler
    private let writer: LinkWriter
    private let datagrams: DatagramRouter
    private let reporter: PeerReporter
    private var gossip: MembersGossip

    init(
        localPeer: PeerID, interval: TimeAmount, logger: Logger, peers: PeerTable, dialler: Dialler,
        writer: LinkWriter, datagrams: DatagramRouter, reporter: PeerReporter
    ) {
        self.localPeer = localPeer
        self.logger = logger
        self.peers = peers
        self.dialler = dialler
        self.writer = writer
        self.datagrams = datagrams
        self.reporter = reporter
        gossip = MembersGossip(interval: interval, now: .now())
    }

    /// The members changed (one connected, or one lost): every peer gets `members` anew at the next exchange.
    func changed() {
        gossip.changed()
    }

    /// Sets what record `record` (a DNS-SD instance name, members heard from a peer) gives for `id`: its endpoints and
    /// name. A record that tells something new dials the peer.
    func addDiscovered(_ endpoints: [Endpoint], peer id: PeerID, name: String, record: String) {
        guard id != localPeer else { return }
        let peer = peers.record(for: id)
        peer.named(name)
        guard dialler.setRecord(record, endpoints: endpoints, for: id) else { return }
        if peer.left && !record.hasPrefix(MembersGossip.recordPrefix) { peer.showsUpAgain() }  // it shows up anew
        if peer.state == .discovered { reporter.publishState(of: peer) }
        dialler.reconcile(id)
    }

    /// Sends `members` to every connected peer whose last one is out of date, at most once per interval.
    func exchange(now: NIODeadline) {
        guard gossip.exchangeDue(at: now) else { return }
        var known: [MembersGossip.Known]?
        for peer in peers.all where peer.isConnected && gossip.isOutdated(peer.id) {
            guard let link = peer.active ?? peer.handshakenLinks.first else { continue }
            if known == nil {
                known = peers.all.filter(\.isConnected).sorted { $0.id < $1.id }.map {
                    MembersGossip.Known(id: $0.id, name: $0.name, endpoints: dialler.provenEndpoints(of: $0.id))
                }
            }
            writer.write(.members(MembersGossip.members(for: peer.id, among: known!)), on: link)
            gossip.told(peer.id)
        }
    }

    /// `peer` says whom it is connected to: each member's endpoints become a record to dial, replacing what `peer`
    /// said before; members it no longer names take their records with them.
    func received(_ members: [Member], from peer: PeerRecord) {
        let update = gossip.received(members, from: peer.id, local: localPeer)
        for record in update.set {
            addDiscovered(record.endpoints, peer: record.peer, name: record.displayName, record: record.name)
        }
        for record in update.withdrawn { dialler.removeRecord(record) }
    }

    /// Forgets a peer that never completed a handshake and that nothing names: no link, no discovery record, no
    /// static endpoint, no proven endpoint. A flood of hellos leaves nothing behind.
    func forgetIfStranger(_ peer: PeerRecord) {
        guard !peer.everConnected, peer.links.isEmpty, !dialler.names(peer.id), peers[peer.id] === peer else { return }
        dialler.forget(peer.id)
        peers.remove(peer)
        gossip.forget(peer.id)
        datagrams.forget(peer.id)
        logger.trace("forgot \(peer.id): it never completed a handshake")
    }
}
