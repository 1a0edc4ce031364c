import Foundation
import WireCodec

/// How a device got in.
public enum DeviceTrust: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Paired here: a person confirmed the same code on both devices.
    case paired
    /// Introduced by a trusted member's signed statement.
    case introduced
    /// Admitted by the session's shared secret (admission `secret`).
    case secret
    /// Admitted because anyone may join (admission `open`).
    case open

    public var description: String { rawValue }
}

/// A device this one trusts (admission `paired`): its keys, how and when it got in, and by whom.
public struct TrustedDevice: Hashable, Sendable {
    public var peerID: PeerID
    /// Its static X25519 public key, which its handshakes prove.
    public var publicKey: [UInt8]
    /// Its Ed25519 public key, which signs its statements.
    public var signingKey: [UInt8]
    /// Its display name when it got in.
    public var name: String
    /// ``DeviceTrust/paired`` or ``DeviceTrust/introduced``.
    public var trust: DeviceTrust
    /// When it got in here.
    public var since: Date
    /// Who introduced it (nil when it was paired here).
    public var introducedBy: PeerID?
    /// The version of the statement it got in by.
    public var version: UInt64

    /// The fingerprint people compare.
    public var fingerprint: String { PeerID.fingerprint(of: publicKey) }
}

/// A device removed from the session, remembered so that it stays out until it is introduced at a later version.
public struct RemovedDevice: Hashable, Sendable {
    public var peerID: PeerID
    public var publicKey: [UInt8]
    public var version: UInt64
    /// Who removed it.
    public var removedBy: PeerID
    public var at: Date
}

/// A pairing waiting for people to confirm on both devices.
public struct PairingRequest: Hashable, Sendable {
    /// The other device.
    public var peerID: PeerID
    /// Its display name.
    public var displayName: String
    /// Its fingerprint.
    public var fingerprint: String
    /// The 6-digit code both devices show; the same on both only when no one is in the middle.
    public var code: String
    /// This side asked (true) or the other did.
    public var requestedHere: Bool
    /// A person confirmed on this side.
    public var confirmedHere: Bool
    /// The other side confirmed.
    public var confirmedThere: Bool
}
