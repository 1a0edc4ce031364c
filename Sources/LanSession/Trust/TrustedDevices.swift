import Crypto
import Foundation
import WireCodec

/// The devices this one trusts and the ones removed, as a plain value, with the rules of docs/wire-format.md
/// section 9.6: statements are signed by a trusted device; per device the highest version wins and a removal wins a
/// tie; every statement this device accepts it re-issues under its own key, so that whoever trusts it can believe
/// it.
struct TrustedDevices {
    /// What came of a statement.
    enum Outcome: Equatable {
        case ignored(String)
        /// A device got in.
        case added(TrustedDevice)
        /// A device was removed.
        case removed(PeerID)
        /// An introduction of this device, kept for its handshakes.
        case aboutMe
    }

    let identity: DeviceIdentity
    let sessionName: String
    private(set) var devices: [PeerID: TrustedDevice] = [:]
    private(set) var removals: [PeerID: RemovedDevice] = [:]
    /// This device's own statement about each device it trusts or removed.
    private(set) var issued: [PeerID: TrustStatement] = [:]
    /// Introductions of this device by others, by issuer (newest versions).
    private(set) var aboutMe: [PeerID: TrustStatement] = [:]

    init(identity: DeviceIdentity, sessionName: String) {
        self.identity = identity
        self.sessionName = sessionName
    }

    init(
        identity: DeviceIdentity, sessionName: String, devices: [TrustedDevice], removals: [RemovedDevice],
        issued: [TrustStatement], aboutMe: [TrustStatement]
    ) {
        self.init(identity: identity, sessionName: sessionName)
        for device in devices { self.devices[device.peerID] = device }
        for removal in removals { self.removals[removal.peerID] = removal }
        for statement in issued { self.issued[PeerID(publicKey: statement.subjectKey)] = statement }
        for statement in aboutMe { self.aboutMe[statement.issuer] = statement }
    }

    var localPeer: PeerID { identity.peerID }

    /// The highest version known for a device.
    func version(of peer: PeerID) -> UInt64 {
        max(devices[peer]?.version ?? 0, removals[peer]?.version ?? 0)
    }

    /// Statements to share with a trusted member: this device's own, sorted by subject.
    var shared: [TrustStatement] {
        issued.sorted { $0.key < $1.key }.map(\.value)
    }

    /// Introductions of this device to put in its handshakes (at most `Wire.maxHandshakeStatements`, newest first).
    var introductionsOfMe: [TrustStatement] {
        Array(
            aboutMe.values.sorted { ($0.version, $0.issuer) > ($1.version, $1.issuer) }.prefix(
                Wire.maxHandshakeStatements))
    }

    /// Pairs with a device: trusted from now, at a version above any known for it; returns the device and this
    /// device's introduction of it.
    mutating func pair(
        publicKey: [UInt8], signingKey: [UInt8], name: String, now: Date
    ) throws(SessionError) -> TrustedDevice {
        let peer = PeerID(publicKey: publicKey)
        let version = self.version(of: peer) + 1
        let device = TrustedDevice(
            peerID: peer, publicKey: publicKey, signingKey: signingKey, name: name, trust: .paired, since: now,
            introducedBy: nil, version: version)
        issued[peer] = try sign(
            TrustStatement(
                verb: .introduce, subjectKey: publicKey, subjectSigningKey: signingKey, subjectName: name,
                version: version, time: Self.millis(now), issuer: localPeer))
        devices[peer] = device
        removals[peer] = nil
        return device
    }

    /// Removes a trusted device (or one with a pairing, known by its key): out from now, at a version above any
    /// known for it.
    mutating func remove(_ peer: PeerID, now: Date) throws(SessionError) {
        guard let key = devices[peer]?.publicKey ?? issued[peer]?.subjectKey else {
            throw SessionError(.trust, "\(peer) is not a trusted device")
        }
        let version = self.version(of: peer) + 1
        issued[peer] = try sign(
            TrustStatement(
                verb: .remove, subjectKey: key, subjectSigningKey: [UInt8](repeating: 0, count: 32),
                subjectName: devices[peer]?.name ?? "", version: version, time: Self.millis(now), issuer: localPeer))
        devices[peer] = nil
        removals[peer] = RemovedDevice(peerID: peer, publicKey: key, version: version, removedBy: localPeer, at: now)
    }

    /// This device was removed from the session: it forgets every device it trusted, without a statement, and the
    /// introductions of itself (they no longer hold). It gets back in by pairing again. True if it trusted any.
    mutating func forgetAll() -> Bool {
        guard !devices.isEmpty else { return false }
        for peer in devices.keys { issued[peer] = nil }
        devices = [:]
        aboutMe = [:]
        return true
    }

    /// Takes a statement from another device: believed only when its issuer is trusted here and its signature
    /// verifies; applied when its version is the highest known for its subject.
    mutating func accept(_ statement: TrustStatement, now: Date) -> Outcome {
        let subject = PeerID(publicKey: statement.subjectKey)
        guard statement.issuer != localPeer else { return .ignored("a statement of this device") }
        guard let issuer = devices[statement.issuer] else {
            return .ignored("issuer \(statement.issuer) is not trusted here")
        }
        guard verify(statement, signedBy: issuer.signingKey) else {
            return .ignored("the signature of \(statement.issuer) does not verify")
        }
        if subject == localPeer {
            guard statement.verb == .introduce else { return .ignored("a removal of this device") }
            if let kept = aboutMe[statement.issuer], kept.version >= statement.version {
                return .ignored("an older introduction of this device")
            }
            aboutMe[statement.issuer] = statement
            return .aboutMe
        }
        switch statement.verb {
        case .introduce:
            if let removal = removals[subject], removal.version >= statement.version {
                return .ignored("\(subject) was removed at version \(removal.version)")
            }
            if let known = devices[subject], known.version >= statement.version {
                return .ignored("\(subject) is trusted already")
            }
            let device = TrustedDevice(
                peerID: subject, publicKey: statement.subjectKey, signingKey: statement.subjectSigningKey,
                name: statement.subjectName,
                trust: devices[subject]?.trust == .paired ? .paired : .introduced, since: now,
                introducedBy: statement.issuer, version: statement.version)
            devices[subject] = device
            removals[subject] = nil
            var own = statement
            own.issuer = localPeer
            issued[subject] = try? sign(own)
            return .added(device)
        case .remove:
            guard version(of: subject) <= statement.version else {
                return .ignored("\(subject) has a later statement than this removal")
            }
            if let removal = removals[subject], removal.version >= statement.version {
                return .ignored("\(subject) is removed already")
            }
            devices[subject] = nil
            removals[subject] = RemovedDevice(
                peerID: subject, publicKey: statement.subjectKey, version: statement.version,
                removedBy: statement.issuer, at: now)
            var own = statement
            own.issuer = localPeer
            issued[subject] = try? sign(own)
            return .removed(subject)
        default:
            return .ignored("unknown verb \(statement.verb.rawValue)")
        }
    }

    /// Whether a device that proved `publicKey` (with `signingKey` in its handshake) is trusted; else, whether one of
    /// the introductions it brought lets it in (which then makes it trusted here).
    mutating func admits(
        publicKey: [UInt8], signingKey: [UInt8], introductions: [TrustStatement], now: Date
    ) -> TrustedDevice? {
        let peer = PeerID(publicKey: publicKey)
        if let device = devices[peer] {
            return device.publicKey == publicKey && device.signingKey == signingKey ? device : nil
        }
        for statement in introductions
        where statement.verb == .introduce && statement.subjectKey == publicKey
            && statement.subjectSigningKey == signingKey
        {
            if case .added(let device) = accept(statement, now: now) { return device }
        }
        return nil
    }

    private func sign(_ statement: TrustStatement) throws(SessionError) -> TrustStatement {
        var signed = statement
        do {
            signed.signature = Array(
                try identity.signingKey.signature(for: statement.signedBytes(sessionName: sessionName)))
        } catch {
            throw SessionError(.trust, "cannot sign a statement: \(error)")
        }
        return signed
    }

    private func verify(_ statement: TrustStatement, signedBy key: [UInt8]) -> Bool {
        guard let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: key),
            let bytes = try? statement.signedBytes(sessionName: sessionName)
        else { return false }
        return publicKey.isValidSignature(statement.signature, for: bytes)
    }

    static func millis(_ date: Date) -> UInt64 {
        UInt64(max(0, date.timeIntervalSince1970 * 1000))
    }
}
