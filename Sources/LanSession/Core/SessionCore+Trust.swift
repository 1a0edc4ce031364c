import Foundation
import LinkCrypto
import NIOCore
import WireCodec

/// The Noise handshake carried out, and trust per device: who a completed handshake proved, whether that device is
/// trusted (admission `paired`), pairing with a code both sides show, introductions and removals among members.
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
            admission.handshakeFailed()
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
            signingKey: configuration.identity.signingPublicKey, statements: trusted.introductionsOfMe)
        let reply: [UInt8]?
        do {
            reply = try security.read(bytes) { () throws(WireError) in try payload.encoded() }
        } catch {
            admission.handshakeFailed()
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
    /// admission decides.
    private func handshakeCompleted(_ hello: Hello, on link: Link) {
        guard let security = link.security, let key = security.remoteKey, let payload = security.remotePayload else {
            return perform(link.step { $0.drop("a handshake without the peer's key") }, on: link)
        }
        guard PeerID(publicKey: key) == hello.peerID else {
            admission.handshakeFailed()
            authenticationRefused(
                link, "it claims to be \(hello.peerID), its key is \(PeerID(publicKey: key))'s")
            return perform(link.step { $0.refuse(.authenticationFailed, "a peer id that is not its key's") }, on: link)
        }
        link.proved(publicKey: key)
        switch configuration.admission {
        case .open:
            link.trusted(as: .open)
        case .secret:
            link.trusted(as: .secret)
        case .paired:
            let known = trusted.devices[hello.peerID] != nil
            guard
                let device = trusted.admits(
                    publicKey: key, signingKey: payload.signingKey, introductions: payload.statements, now: Date())
            else {
                return becomeStranger(link, hello: hello, signingKey: payload.signingKey)
            }
            link.trusted(as: device.trust)
            if !known {
                logger.debug(
                    "\(hello.displayName) (\(hello.peerID)) got in on \(device.introducedBy.map { "\($0)" } ?? "?")'s introduction"
                )
                trustChanged()
                events.yield(.introduced(device))
            }
        }
        admit(hello, on: link)
    }

    /// An untrusted device: its link stays open for it to ask to pair, and for nothing else.
    private func becomeStranger(_ link: Link, hello: Hello, signingKey: [UInt8]) {
        link.becomeStranger(signingKey: signingKey)
        pairings.stranger(link, is: hello.peerID)
        logger.debug("\(hello.displayName) (\(hello.peerID)) is not a trusted device: it may only ask to pair")
        let fingerprint = PeerID.fingerprint(of: link.publicKey ?? [])
        if events.countNotice(.stranger).report {
            events.yield(.notice(.notPaired(hello.peerID, name: hello.displayName, fingerprint: fingerprint)))
        }
        if pairings.wanted.contains(hello.peerID) { askToPair(on: link, hello: hello) }
    }

    // MARK: - Pairing

    /// Asks `peer` to pair: on its stranger link when there is one, else as soon as a dial reaches it.
    func requestPairing(with peer: PeerID) throws(SessionError) -> PairingRequest? {
        guard case .paired = configuration.admission else {
            throw SessionError(.trust, "admission is \(configuration.admission): devices do not pair")
        }
        guard peer != localPeer else { throw SessionError(.trust, "a device does not pair with itself") }
        if let pending = pairings.pending[peer] { return pending.request }
        if trusted.devices[peer] != nil { throw SessionError(.trust, "\(peer) is trusted already") }
        if let link = pairings.link(of: peer), let hello = link.hello {
            return askToPair(on: link, hello: hello)
        }
        guard peers[peer] != nil || dialler.hasEndpoints(peer) else {
            throw SessionError(.noSuchPeer, "\(peer) is not known: discover it, or connect to its address")
        }
        pairings.want(peer)
        peers[peer]?.showsUpAgain()  // asked for by a person: dialled even if it left or removed this device
        dialler.reconcile(peer)
        return nil
    }

    @discardableResult
    private func askToPair(on link: Link, hello: Hello) -> PairingRequest? {
        guard let pending = startPairing(on: link, hello: hello, requestedHere: true) else { return nil }
        writer.write(.pairing(.request), on: link)
        return pending.request
    }

    private func startPairing(on link: Link, hello: Hello, requestedHere: Bool) -> Pairings.Pending? {
        guard let code = link.security?.pairingCode, let key = link.publicKey, let signingKey = link.signingKey else {
            return nil
        }
        link.step { $0.startPairing() }
        let request = PairingRequest(
            peerID: hello.peerID, displayName: hello.displayName, fingerprint: PeerID.fingerprint(of: key),
            code: code, requestedHere: requestedHere, confirmedHere: false, confirmedThere: false)
        let pending = Pairings.Pending(request: request, link: link, publicKey: key, signingKey: signingKey)
        pairings.start(pending)
        logger.debug("pairing with \(hello.displayName) (\(hello.peerID)): code \(code)")
        events.yield(.pairingRequested(request))
        return pending
    }

    /// A pairing step from a stranger.
    func receivedPairing(_ step: PairingStep, on link: Link) {
        guard let hello = link.hello else { return }
        let peer = hello.peerID
        switch step {
        case .request:
            if pairings.pending[peer] == nil {
                _ = startPairing(on: link, hello: hello, requestedHere: false)
            }
        case .confirm:
            guard let pending = pairings.confirmThere(peer), pending.link === link else {
                return perform(link.step { $0.refuse(.notTrusted, "a confirmation without a pairing") }, on: link)
            }
            if pending.request.confirmedHere { try? completePairing(pending) }
        case .reject:
            endPairing(peer, reason: "\(hello.displayName) rejected the pairing", tell: false)
        default:
            perform(link.step { $0.refuse(.notTrusted, "unknown pairing step \(step.rawValue)") }, on: link)
        }
    }

    /// A person confirmed that the codes match on this side. The side that confirms last saves the pair before it
    /// sends its confirmation, so that a save that fails (a full disk) makes no pair on either side.
    func confirmPairing(with peer: PeerID, code: String) throws(SessionError) {
        guard let pending = pairings.pending[peer] else {
            throw SessionError(.trust, "no pairing with \(peer) is under way")
        }
        guard code == pending.request.code else {
            throw SessionError(
                .trust,
                "code \(code) is not the code shown for \(peer); nothing is confirmed and the pairing goes on: "
                    + "compare the codes again")
        }
        guard let confirmed = pairings.confirmHere(peer) else { return }
        if confirmed.request.confirmedThere {
            try completePairing(confirmed, confirmingAfterSave: true)
        } else {
            writer.write(.pairing(.confirm), on: confirmed.link)
        }
    }

    /// Both sides confirmed: the device is trusted (saved first: a failed save makes no pair, and the other side
    /// hears `reject`), and its link goes on to the invitation.
    private func completePairing(_ pending: Pairings.Pending, confirmingAfterSave: Bool = false) throws(SessionError) {
        let peer = pending.request.peerID
        var candidate = trusted
        let device: TrustedDevice
        do {
            device = try candidate.pair(
                publicKey: pending.publicKey, signingKey: pending.signingKey, name: pending.request.displayName,
                now: Date())
            try trustStore?.save(candidate)
        } catch {
            logger.debug("pairing with \(peer) failed: \(error)")
            endPairing(peer, reason: "this side could not save the pairing: \(error.message)", tell: true)
            throw SessionError(.trust, "the pairing with \(peer) is not made: \(error.message)")
        }
        trusted = candidate
        pairings.end(peer)
        let link = pending.link
        if confirmingAfterSave { writer.write(.pairing(.confirm), on: link) }
        link.trusted(as: .paired)
        logger.debug("paired with \(device.name) (\(peer), \(device.fingerprint))")
        events.yield(.paired(device))
        broadcastTrust()
        if let hello = link.hello, link.isOpen { admit(hello, on: link) }
        trustedAnew(peer)
    }

    /// Ends a pairing that was not made; `tell`: the other side hears it was rejected.
    func endPairing(_ peer: PeerID, reason: String, tell: Bool) {
        guard let pending = pairings.end(peer) else { return }
        if tell { writer.write(.pairing(.reject), on: pending.link) }
        events.yield(.pairingEnded(peer, reason: reason))
        perform(pending.link.step { $0.refuse(.notTrusted, "pairing not made: \(reason)") }, on: pending.link)
    }

    // MARK: - Introductions and removals

    /// Removes a device (or rejects a pairing with it): its links close here, and every member hears it.
    func unpair(_ peer: PeerID) throws(SessionError) {
        if pairings.pending[peer] != nil {
            return endPairing(peer, reason: "rejected on this side", tell: true)
        }
        guard case .paired = configuration.admission else {
            throw SessionError(.trust, "admission is \(configuration.admission): devices are not paired")
        }
        var candidate = trusted
        try candidate.remove(peer, now: Date())
        try trustStore?.save(candidate)
        trusted = candidate
        logger.debug("removed \(peer)")
        events.yield(.unpaired(peer, by: localPeer))
        broadcastTrust()
        dropRemoved(peer)
    }

    /// A member said this device was removed from the session: every member is closing its links to it, so it
    /// forgets the devices it trusted (locally, with no statement) and gets back in only by pairing again, from
    /// either side.
    func removedBy(_ peer: PeerID) {
        guard trusted.devices[peer] != nil, trusted.forgetAll() else { return }
        logger.debug("\(peer) removed this device from the session; it forgets the devices it trusted")
        trustChanged()
    }

    /// A device is trusted (again): a stranger's link of it goes on to the invitation at once (a pairing under way is
    /// moot), and it is dialled now, where it is known, even if it left or was removed before.
    private func trustedAnew(_ id: PeerID) {
        if let link = pairings.link(of: id), let hello = link.hello {
            pairings.end(id)
            link.trusted(as: trusted.devices[id]?.trust)
            admit(hello, on: link)
        }
        guard let peer = peers[id] else { return }
        peer.showsUpAgain()
        dialler.reconcile(id)
    }

    /// The links of a removed device close, and it is not redialled.
    private func dropRemoved(_ id: PeerID) {
        if let peer = peers[id] {
            peer.leave(.declined(.notTrusted))
            for link in Array(peer.links.values) { perform(link.step { $0.leave(.removed) }, on: link) }
        }
        dialler.stopDialling(id)
    }

    /// Statements from a trusted member: believed when signed by a device trusted here; removals close links.
    func receivedTrust(_ statements: [TrustStatement], from peer: PeerRecord) {
        guard case .paired = configuration.admission else { return }
        var changed = false
        for statement in statements {
            switch trusted.accept(statement, now: Date()) {
            case .ignored(let why):
                logger.trace("statement about \(PeerID(publicKey: statement.subjectKey)) ignored: \(why)")
            case .added(let device):
                changed = true
                logger.debug("\(device.name) (\(device.peerID)) introduced by \(statement.issuer)")
                events.yield(.introduced(device))
                trustedAnew(device.peerID)
            case .removed(let removed):
                changed = true
                logger.debug("\(removed) removed by \(statement.issuer)")
                events.yield(.unpaired(removed, by: statement.issuer))
                dropRemoved(removed)
            case .aboutMe:
                changed = true
            }
        }
        if changed { trustChanged() }
    }

    /// The trusted set changed: saved (a failure is logged and told; the next change saves again), and told to the
    /// members.
    private func trustChanged() {
        do {
            try trustStore?.save(trusted)
        } catch {
            logger.debug("cannot save the trusted devices: \(error)")
            events.yield(.notice(.trustNotSaved(detail: error.message)))
        }
        broadcastTrust()
    }

    /// Sends this device's statements on `link` (a member's, handshaken).
    func sendTrust(on link: Link) {
        guard case .paired = configuration.admission else { return }
        let statements = trusted.shared
        guard !statements.isEmpty else { return }
        for start in stride(from: 0, to: statements.count, by: Wire.maxTrustStatements) {
            let end = min(statements.count, start + Wire.maxTrustStatements)
            writer.write(.trust(Array(statements[start..<end])), on: link)
        }
    }

    /// Sends this device's statements to every connected member.
    private func broadcastTrust() {
        for peer in peers.all where peer.isConnected && !peer.left {
            if let link = peer.active ?? peer.handshakenLinks.first, link.isOpen { sendTrust(on: link) }
        }
    }

    /// Forgets stranger links and pairings of a closed link.
    func trustLinkClosed(_ link: Link) {
        for peer in pairings.linkClosed(link) {
            events.yield(.pairingEnded(peer, reason: "the link closed"))
        }
    }
}
