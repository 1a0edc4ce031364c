import LinkCrypto
import NIOCore
import WireCodec

/// The Noise handshake carried out: who a completed handshake proved, then whether that device gets in
/// (``TrustKeeper``), whose decisions the core carries out on links and peers.
extension SessionCore {
    // MARK: - The handshake

    /// The hello is acceptable: the Noise handshake starts (the dialer writes message 1).
    func beginHandshake(_ hello: Hello, on link: Link) {
        guard let security = link.security else {
            return perform(link.step { $0.drop("encryption but no security on the link") }, on: link)
        }
        link.step { $0.handshake() }
        do {
            if let first = try security.begin(remoteHello: hello) { writer.write(.noise(first), on: link) }
        } catch {
            handshakeFailed()
            refuse(link, hello: hello, reason: .authenticationFailed, "\(error)")
        }
    }

    /// A Noise message arrived: read, answered, and when the handshake is complete for this side, the device it
    /// proved is checked.
    func handshakeMessage(_ bytes: [UInt8], on link: Link) {
        guard let security = link.security, let hello = link.hello else {
            return perform(link.step { $0.drop("a handshake message without a handshake") }, on: link)
        }
        let payload = HandshakePayload(
            signingKey: configuration.identity.signingPublicKey, statements: trust.introductionsOfMe)
        let reply: [UInt8]?
        do {
            reply = try security.read(bytes) { () throws(WireError) in try payload.encoded() }
        } catch {
            handshakeFailed()
            authenticationRefused(link, "it claims to be \(hello.peerID): \(error)")
            return perform(link.step { $0.drop("handshake failed") }, on: link)
        }
        if let reply { writer.write(.noise(reply), on: link) }
        guard security.isEstablished else { return }
        writer.writePending(of: link)  // this side's last handshake message goes in clear
        security.startSealing()
        handshakeCompleted(hello, on: link)
    }

    /// The handshake proved the peer's static key: it must be the key of the peer id its hello claims; then the
    /// trust component decides.
    private func handshakeCompleted(_ hello: Hello, on link: Link) {
        guard let security = link.security, let key = security.remoteKey, let payload = security.remotePayload else {
            return perform(link.step { $0.drop("a handshake without the peer's key") }, on: link)
        }
        guard PeerID(publicKey: key) == hello.peerID else {
            handshakeFailed()
            authenticationRefused(
                link, "it claims to be \(hello.peerID), its key is \(PeerID(publicKey: key))'s")
            return perform(link.step { $0.refuse(.authenticationFailed, "a peer id that is not its key's") }, on: link)
        }
        link.proved(publicKey: key)
        trust.handshakeCompleted(hello, on: link, publicKey: key, payload: payload)
    }

    /// Sends this device's statements on `link` (a member's, handshaken).
    func sendTrust(on link: Link) {
        for message in trust.statementMessages { writer.write(message, on: link) }
    }
}

extension SessionCore: TrustKeeperDelegate {
    func write(_ message: Message, on link: Link) {
        writer.write(message, on: link)
    }

    func refuseUntrusted(_ link: Link, _ detail: String) {
        perform(link.step { $0.refuse(.notTrusted, detail) }, on: link)
    }

    func admitTrusted(_ link: Link) {
        if let hello = link.hello, link.isOpen { admit(hello, on: link) }
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
