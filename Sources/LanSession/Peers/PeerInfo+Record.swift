import WireCodec

extension PeerInfo {
    /// The snapshot of `peer`: its links, the active one first; `endpoints` where it can be dialled, `unreliable` the
    /// route of its unreliable channel, `transport` the transport named while it has no active link.
    init(_ peer: PeerRecord, endpoints: [Endpoint], unreliable: UnreliableRoute, transport: String) {
        let standby = peer.links.values.filter { $0 !== peer.active }.sorted {
            $0.remoteDescription < $1.remoteDescription
        }
        let links = (peer.active.map { [$0] } ?? []) + standby
        self.init(
            peerID: peer.id, name: peer.name, state: peer.state, transport: peer.active?.transport.name ?? transport,
            address: peer.active?.remoteDescription ?? endpoints.first?.description, links: links.map(\.info),
            endpoints: endpoints, rttMicros: peer.rtt.smoothed.map { Int($0.nanoseconds / 1000) },
            unreliable: unreliable, encrypted: peer.active?.security?.isEstablished ?? false,
            cipher: peer.active?.security?.cipher, fingerprint: peer.publicKey.map(PeerID.fingerprint(of:)),
            trust: peer.trust)
    }
}
