import Logging
import NIOCore
import NIOPosix
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
    private let loop: any EventLoop
    /// Where the members are kept across restarts; nil: not kept.
    private let store: MembersStore?
    /// The members as last saved (or loaded), and whether a save is under way or due again after it.
    private var kept: Set<MembersStore.Member> = []
    private var saving = false
    private var saveAgain = false

    init(
        localPeer: PeerID, interval: TimeAmount, logger: Logger, peers: PeerTable, dialler: Dialler,
        writer: LinkWriter, datagrams: DatagramRouter, reporter: PeerReporter, loop: any EventLoop,
        store: MembersStore?
    ) {
        self.localPeer = localPeer
        self.logger = logger
        self.peers = peers
        self.dialler = dialler
        self.writer = writer
        self.datagrams = datagrams
        self.reporter = reporter
        gossip = MembersGossip(interval: interval, now: .now())
        self.loop = loop
        self.store = store
        for (id, name) in store?.load() ?? [] where id != localPeer {
            peers.record(for: id).remembered(name: name)
            kept.insert(MembersStore.Member(peerID: "\(id)", name: name))
        }
        if !kept.isEmpty { logger.debug("remembered \(kept.count) members of before the start") }
    }

    /// The entries of its tables, by name (``Session/tableSizes()``): the gossip's, and the members kept.
    var tableSizes: [String: Int] { gossip.tableSizes.merging(["membersKept": kept.count]) { $1 } }

    /// The members changed (one connected, or one lost): every peer gets `members` anew at the next exchange, and the
    /// store keeps the new set.
    func changed() {
        gossip.changed()
        keep()
    }

    /// Saves the members, off the loop, when their set changed since the last save; one save at a time, the last set
    /// last.
    private func keep() {
        guard let store else { return }
        let members = Set(peers.members.map { MembersStore.Member(peerID: "\($0.id)", name: $0.name) })
        guard members != kept else { return }
        guard !saving else {
            saveAgain = true
            return
        }
        (saving, kept) = (true, members)
        let bound = NIOLoopBound(self, eventLoop: loop)
        NIOThreadPool.singleton.runIfActive(eventLoop: loop) { () throws -> Void in
            try store.save(Array(members))
        }.whenComplete { result in
            let exchange = bound.value
            exchange.saving = false
            if case .failure(let error) = result {
                exchange.logger.debug("cannot keep the members: \(error)", metadata: ["file": "\(store.path)"])
                exchange.kept = []  // saved again at the next change
            }
            if exchange.saveAgain {
                exchange.saveAgain = false
                exchange.keep()
            }
        }
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
