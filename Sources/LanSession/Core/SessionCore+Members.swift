import NIOCore
import WireCodec

/// Where peers are: static endpoints, discovery records, and the members connected peers name.
extension SessionCore {
    /// Sets what record `record` (a DNS-SD instance name, members heard from a peer) gives for `id`: its endpoints and
    /// name. A record that tells something new dials the peer.
    func addDiscovered(_ endpoints: [Endpoint], peer id: PeerID, name: String, record: String) {
        guard id != localPeer else { return }
        let peer = peers.record(for: id)
        peer.named(name)
        guard dialler.setRecord(record, endpoints: endpoints, for: id) else { return }
        if peer.left && !record.hasPrefix(MembersGossip.recordPrefix) { peer.showsUpAgain() }  // it shows up anew
        if peer.state == .discovered { publishState(of: peer) }
        dialler.reconcile(id)
    }

    /// Sends `members` to every connected peer whose last one is out of date, at most once per interval.
    func exchangeMembers(now: NIODeadline) {
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
    func receivedMembers(_ members: [Member], from peer: PeerRecord) {
        let update = gossip.received(members, from: peer.id, local: localPeer)
        for record in update.set {
            addDiscovered(record.endpoints, peer: record.peer, name: record.displayName, record: record.name)
        }
        for record in update.withdrawn { dialler.removeRecord(record) }
    }
}
