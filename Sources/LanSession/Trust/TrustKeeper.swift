import Foundation
import LinkCrypto
import Logging
import WireCodec

/// What the trust component asks of the session: the effects of its decisions on links, peers and subscribers.
protocol TrustKeeperDelegate: AnyObject {
    /// Writes `message` on `link`.
    func write(_ message: Message, on link: Link)
    /// Writes what is pending on `link` now (this side's last handshake message goes in clear, before sealing starts).
    func writePending(of link: Link)
    /// Drops `link` without a word (a handshake out of place).
    func drop(_ link: Link, _ reason: String)
    /// The Noise handshake on `link` failed: counted, told to the subscribers as `detail` (rate-limited), and the
    /// link refused with `refusal` as the reason it is told, or dropped without a word when nil.
    func handshakeFailed(_ link: Link, _ detail: String, refusal: String?)
    /// Refuses the device on `link` as not trusted, telling it why.
    func refuseUntrusted(_ link: Link, _ detail: String)
    /// The device on `link` is trusted: the link goes on to the invitation, if still open.
    func admitTrusted(_ link: Link)
    /// Tells the subscribers.
    func emit(_ event: SessionEvent)
    /// Tells the subscribers that a device is not paired (rate-limited by the session).
    func notPaired(_ notice: SessionNotice)
    /// Whether `peer` is known (a peer of the session, or endpoints to dial it at).
    func canDial(_ peer: PeerID) -> Bool
    /// `peer` is dialled now, where it is known, even if it left or removed this device before.
    func redial(_ peer: PeerID)
    /// `peer` was removed: its links close, and it is not redialled.
    func dropRemoved(_ peer: PeerID)
    /// The trusted set changed: every connected member hears this device's statements.
    func broadcastTrust()
}

/// Trust per device (admission `paired`): the trusted set and where it is saved, pairing with a code both sides show,
/// the links of untrusted devices (strangers), introductions and removals among members. It decides; the session
/// carries its decisions out on links and peers (``TrustKeeperDelegate``).
final class TrustKeeper {
    private let admission: AdmissionMode
    private let localPeer: PeerID
    /// This device's signing key, for its handshake payload.
    private let signingKey: [UInt8]
    private let logger: Logger
    /// Where the trusted set is kept; nil: in memory only.
    private let store: TrustStore?
    private var trusted: TrustedDevices
    private var pairings = Pairings()
    weak var delegate: (any TrustKeeperDelegate)?

    /// The entries of its tables, by name (``Session/tableSizes()``): the pairings, not the trusted set (devices stay
    /// trusted until removed).
    var tableSizes: [String: Int] {
        [
            "pairings": pairings.pending.count, "pairingStrangers": pairings.strangers.count,
            "pairingsWanted": pairings.wanted.count,
        ]
    }

    init(
        admission: AdmissionMode, identity: DeviceIdentity, trusted: TrustedDevices, store: TrustStore?,
        logger: Logger
    ) {
        self.admission = admission
        self.localPeer = identity.peerID
        self.signingKey = identity.signingPublicKey
        self.trusted = trusted
        self.store = store
        self.logger = logger
    }

    private var isPaired: Bool { admission == .paired }

    // MARK: - What it tells

    /// The trusted devices, by peer id.
    var devices: [TrustedDevice] { trusted.devices.values.sorted { $0.peerID < $1.peerID } }

    /// The devices removed from the session, by peer id.
    var removals: [RemovedDevice] { trusted.removals.values.sorted { $0.peerID < $1.peerID } }

    /// The pairings under way, by peer id.
    var requests: [PairingRequest] { pairings.requests }

    /// Whether `peer` is dialled only to ask it to pair (admission `paired`, not trusted): then whether this side
    /// wants to pair with it; nil for a trusted device or another admission.
    func dialsOnlyToPair(_ peer: PeerID) -> Bool? {
        guard isPaired, trusted.devices[peer] == nil else { return nil }
        return pairings.wanted.contains(peer)
    }

    /// This device's statements as `trust` messages (each within the wire's limit), for a member's link; none when
    /// admission is not `paired`.
    var statementMessages: [Message] {
        guard isPaired else { return [] }
        let statements = trusted.shared
        return stride(from: 0, to: statements.count, by: Wire.maxTrustStatements).map { start in
            .trust(Array(statements[start..<min(statements.count, start + Wire.maxTrustStatements)]))
        }
    }

    // MARK: - The Noise handshake

    /// The hello on `link` is acceptable: the Noise handshake starts (the dialer writes message 1).
    func beginHandshake(_ hello: Hello, on link: Link) {
        guard let security = link.security else {
            delegate?.drop(link, "encryption but no security on the link")
            return
        }
        link.step { $0.handshake() }
        do {
            if let first = try security.begin(remoteHello: hello) { delegate?.write(.noise(first), on: link) }
        } catch {
            delegate?.handshakeFailed(link, "\(error)", refusal: "\(error)")
        }
    }

    /// A Noise message arrived: read, answered, and when the handshake is complete for this side, the device it
    /// proved is checked.
    func handshakeMessage(_ bytes: [UInt8], on link: Link) {
        guard let security = link.security, let hello = link.hello else {
            delegate?.drop(link, "a handshake message without a handshake")
            return
        }
        let payload = HandshakePayload(signingKey: signingKey, statements: trusted.introductionsOfMe)
        let reply: [UInt8]?
        do {
            reply = try security.read(bytes) { () throws(WireError) in try payload.encoded() }
        } catch {
            delegate?.handshakeFailed(link, "it claims to be \(hello.peerID): \(error)", refusal: nil)
            return
        }
        if let reply { delegate?.write(.noise(reply), on: link) }
        guard security.isEstablished else { return }
        delegate?.writePending(of: link)  // this side's last handshake message goes in clear
        security.startSealing()
        guard let key = security.remoteKey, let remote = security.remotePayload else {
            delegate?.drop(link, "a handshake without the peer's key")
            return
        }
        // The handshake proved the peer's static key: it must be the key of the peer id its hello claims.
        guard PeerID(publicKey: key) == hello.peerID else {
            delegate?.handshakeFailed(
                link, "it claims to be \(hello.peerID), its key is \(PeerID(publicKey: key))'s",
                refusal: "a peer id that is not its key's")
            return
        }
        link.proved(publicKey: key)
        handshakeCompleted(hello, on: link, publicKey: key, payload: remote)
    }

    // MARK: - The handshake's outcome

    /// The handshake proved the device on `link` (its key is `publicKey`, its hello `hello`): how it got in, or as a
    /// stranger that may only ask to pair.
    private func handshakeCompleted(
        _ hello: Hello, on link: Link, publicKey key: [UInt8], payload: HandshakePayload
    ) {
        switch admission {
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
                changed()
                delegate?.emit(.introduced(device))
            }
        }
        delegate?.admitTrusted(link)
    }

    /// An untrusted device: its link stays open for it to ask to pair, and for nothing else.
    private func becomeStranger(_ link: Link, hello: Hello, signingKey: [UInt8]) {
        link.becomeStranger(signingKey: signingKey)
        pairings.stranger(link, is: hello.peerID)
        logger.debug("\(hello.displayName) (\(hello.peerID)) is not a trusted device: it may only ask to pair")
        let fingerprint = PeerID.fingerprint(of: link.publicKey ?? [])
        delegate?.notPaired(.notPaired(hello.peerID, name: hello.displayName, fingerprint: fingerprint))
        if pairings.wanted.contains(hello.peerID) { askToPair(on: link, hello: hello) }
    }

    // MARK: - Pairing

    /// Asks `peer` to pair: on its stranger link when there is one, else as soon as a dial reaches it.
    func requestPairing(with peer: PeerID) throws(SessionError) -> PairingRequest? {
        guard isPaired else { throw SessionError(.trust, "admission is \(admission): devices do not pair") }
        guard peer != localPeer else { throw SessionError(.trust, "a device does not pair with itself") }
        if let pending = pairings.pending[peer] { return pending.request }
        if trusted.devices[peer] != nil { throw SessionError(.trust, "\(peer) is trusted already") }
        if let link = pairings.link(of: peer), let hello = link.hello {
            return askToPair(on: link, hello: hello)
        }
        guard delegate?.canDial(peer) == true else {
            throw SessionError(.noSuchPeer, "\(peer) is not known: discover it, or connect to its address")
        }
        pairings.want(peer)
        delegate?.redial(peer)  // asked for by a person: dialled even if it left or removed this device
        return nil
    }

    @discardableResult
    private func askToPair(on link: Link, hello: Hello) -> PairingRequest? {
        guard let pending = startPairing(on: link, hello: hello, requestedHere: true) else { return nil }
        delegate?.write(.pairing(.request), on: link)
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
        delegate?.emit(.pairingRequested(request))
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
                return refuse(link, "a confirmation without a pairing")
            }
            if pending.request.confirmedHere { try? completePairing(pending) }
        case .reject:
            endPairing(peer, reason: "\(hello.displayName) rejected the pairing", tell: false)
        default:
            refuse(link, "unknown pairing step \(step.rawValue)")
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
            delegate?.write(.pairing(.confirm), on: confirmed.link)
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
            try store?.save(candidate)
        } catch {
            logger.debug("pairing with \(peer) failed: \(error)")
            endPairing(peer, reason: "this side could not save the pairing: \(error.message)", tell: true)
            throw SessionError(.trust, "the pairing with \(peer) is not made: \(error.message)")
        }
        trusted = candidate
        pairings.end(peer)
        let link = pending.link
        if confirmingAfterSave { delegate?.write(.pairing(.confirm), on: link) }
        link.trusted(as: .paired)
        logger.debug("paired with \(device.name) (\(peer), \(device.fingerprint))")
        delegate?.emit(.paired(device))
        delegate?.broadcastTrust()
        delegate?.admitTrusted(link)
        trustedAnew(peer)
    }

    /// Ends a pairing that was not made; `tell`: the other side hears it was rejected.
    private func endPairing(_ peer: PeerID, reason: String, tell: Bool) {
        guard let pending = pairings.end(peer) else { return }
        if tell { delegate?.write(.pairing(.reject), on: pending.link) }
        delegate?.emit(.pairingEnded(peer, reason: reason))
        refuse(pending.link, "pairing not made: \(reason)")
    }

    private func refuse(_ link: Link, _ detail: String) {
        delegate?.refuseUntrusted(link, detail)
    }

    // MARK: - Introductions and removals

    /// Removes a device (or rejects a pairing with it): its links close here, and every member hears it.
    func unpair(_ peer: PeerID) throws(SessionError) {
        if pairings.pending[peer] != nil {
            return endPairing(peer, reason: "rejected on this side", tell: true)
        }
        guard isPaired else { throw SessionError(.trust, "admission is \(admission): devices are not paired") }
        var candidate = trusted
        try candidate.remove(peer, now: Date())
        try store?.save(candidate)
        trusted = candidate
        logger.debug("removed \(peer)")
        delegate?.emit(.unpaired(peer, by: localPeer))
        delegate?.broadcastTrust()
        delegate?.dropRemoved(peer)
    }

    /// A member said this device was removed from the session: every member is closing its links to it, so it
    /// forgets the devices it trusted (locally, with no statement) and gets back in only by pairing again, from
    /// either side.
    func removedBy(_ peer: PeerID) {
        guard trusted.devices[peer] != nil, trusted.forgetAll() else { return }
        logger.debug("\(peer) removed this device from the session; it forgets the devices it trusted")
        changed()
    }

    /// A device is trusted (again): a stranger's link of it goes on to the invitation at once (a pairing under way is
    /// moot), and it is dialled now, where it is known, even if it left or was removed before.
    private func trustedAnew(_ id: PeerID) {
        if let link = pairings.link(of: id), link.hello != nil {
            pairings.end(id)
            link.trusted(as: trusted.devices[id]?.trust)
            delegate?.admitTrusted(link)
        }
        delegate?.redial(id)
    }

    /// Statements from a trusted member: believed when signed by a device trusted here; removals close links.
    func received(_ statements: [TrustStatement]) {
        guard isPaired else { return }
        var changed = false
        for statement in statements {
            switch trusted.accept(statement, now: Date()) {
            case .ignored(let why):
                logger.trace("statement about \(PeerID(publicKey: statement.subjectKey)) ignored: \(why)")
            case .added(let device):
                changed = true
                logger.debug("\(device.name) (\(device.peerID)) introduced by \(statement.issuer)")
                delegate?.emit(.introduced(device))
                trustedAnew(device.peerID)
            case .removed(let removed):
                changed = true
                logger.debug("\(removed) removed by \(statement.issuer)")
                delegate?.emit(.unpaired(removed, by: statement.issuer))
                delegate?.dropRemoved(removed)
            case .aboutMe:
                changed = true
            }
        }
        if changed { self.changed() }
    }

    /// The trusted set changed: saved (a failure is logged and told; the next change saves again), and told to the
    /// members.
    private func changed() {
        do {
            try store?.save(trusted)
        } catch {
            logger.debug("cannot save the trusted devices: \(error)")
            delegate?.emit(.notice(.trustNotSaved(detail: error.message)))
        }
        delegate?.broadcastTrust()
    }

    /// A link closed: the stranger link and the pairings it carried end.
    func linkClosed(_ link: Link) {
        for peer in pairings.linkClosed(link) {
            delegate?.emit(.pairingEnded(peer, reason: "the link closed"))
        }
    }
}
