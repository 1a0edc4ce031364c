import LinkCrypto
import NIOCore
import WireCodec

/// The ``TrustKeeper``'s decisions (the Noise handshake's steps, who gets in, pairings, removals) carried out on links
/// and peers.
extension SessionCore {
    /// Sends this device's statements on `link` (a member's, handshaken).
    func sendTrust(on link: Link) {
        for message in trust.statementMessages { writer.write(message, on: link) }
    }
}

extension SessionCore: TrustKeeperDelegate {
    func write(_ message: Message, on link: Link) {
        writer.write(message, on: link)
    }

    func writePending(of link: Link) {
        writer.writePending(of: link)
    }

    func drop(_ link: Link, _ reason: String) {
        perform(link.step { $0.drop(reason) }, on: link)
    }

    func refuseUntrusted(_ link: Link, _ detail: String) {
        perform(link.step { $0.refuse(.notTrusted, detail) }, on: link)
    }

    func admitTrusted(_ link: Link) {
        if let hello = link.hello, link.isOpen { gate.admit(hello, on: link) }
    }

    func handshakeFailed(_ link: Link, _ detail: String, refusal: String?) {
        gate.handshakeFailed(link, detail, refusal: refusal)
    }

    func notPaired(_ notice: SessionNotice) {
        if events.countNotice(.stranger).report { events.yield(.notice(notice)) }
    }

    func canDial(_ peer: PeerID) -> Bool {
        peers[peer] != nil || dialler.hasEndpoints(peer)
    }

    func redial(_ id: PeerID) {
        peers[id]?.showsUpAgain()
        dialler.reconcile(id)
    }

    func dropRemoved(_ id: PeerID) {
        if let peer = peers[id] {
            peer.leave(.declined(.notTrusted))
            for link in Array(peer.links.values) { perform(link.step { $0.leave(.removed) }, on: link) }
        }
        dialler.stopDialling(id)
    }

    func broadcastTrust() {
        for peer in peers.all where peer.isConnected && !peer.left {
            if let link = peer.active ?? peer.handshakenLinks.first, link.isOpen { sendTrust(on: link) }
        }
    }
}
