import WireCodec

/// Pairings under way and untrusted devices' links, as a plain value: per device, the request both sides show and
/// who confirmed; and the devices this side wants to pair with but has no link to yet.
struct Pairings {
    struct Pending {
        var request: PairingRequest
        let link: Link
        let publicKey: [UInt8]
        let signingKey: [UInt8]
    }

    private(set) var pending: [PeerID: Pending] = [:]
    /// Links of untrusted devices, by their peer id: the way to ask them to pair.
    private(set) var strangers: [PeerID: Link] = [:]
    /// Devices to ask as soon as a link to them is up.
    private(set) var wanted: Set<PeerID> = []

    var requests: [PairingRequest] { pending.values.map(\.request).sorted { $0.peerID < $1.peerID } }

    mutating func stranger(_ link: Link, is peer: PeerID) {
        strangers[peer] = link
    }

    mutating func want(_ peer: PeerID) {
        wanted.insert(peer)
    }

    mutating func start(_ pending: Pending) {
        self.pending[pending.request.peerID] = pending
        wanted.remove(pending.request.peerID)
    }

    mutating func confirmHere(_ peer: PeerID) -> Pending? {
        pending[peer]?.request.confirmedHere = true
        return pending[peer]
    }

    mutating func confirmThere(_ peer: PeerID) -> Pending? {
        pending[peer]?.request.confirmedThere = true
        return pending[peer]
    }

    /// Ends a pairing (made or not).
    @discardableResult
    mutating func end(_ peer: PeerID) -> Pending? {
        wanted.remove(peer)
        return pending.removeValue(forKey: peer)
    }

    /// A link closed: what it carried ends.
    mutating func linkClosed(_ link: Link) -> [PeerID] {
        for (peer, stranger) in strangers where stranger === link { strangers[peer] = nil }
        let ended = pending.filter { $0.value.link === link }.map(\.key)
        for peer in ended { pending[peer] = nil }
        return ended
    }

    /// The stranger link of `peer`, if still open.
    func link(of peer: PeerID) -> Link? {
        guard let link = strangers[peer], link.isOpen, link.machine.isStranger else { return nil }
        return link
    }
}
