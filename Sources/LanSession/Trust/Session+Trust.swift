import WireCodec

/// Trust per device (admission `paired`): pairing with a code both devices show, the trusted set, removal.
extension Session {
    /// This device's fingerprint, which people compare.
    public var fingerprint: String { configuration.identity.fingerprint }

    /// Asks `peer` to pair. The request comes back at once when a link to the device is up (both devices then show
    /// ``PairingRequest/code``), or nil when a dial to it goes first: the request then arrives as a
    /// ``SessionEvent/pairingRequested(_:)`` event, as does the other device's.
    ///
    /// - Throws: ``SessionError/Code/trust`` when admission is not `paired` or the device is trusted already,
    ///   ``SessionError/Code/noSuchPeer`` when the device is not known.
    public func requestPairing(with peer: PeerID) async throws(SessionError) -> PairingRequest? {
        try await callComponents { components throws(SessionError) in try components.trust.requestPairing(with: peer) }
    }

    /// Confirms, on this device, that the code shown for `peer` matches the other device's: the pair is made when
    /// both devices confirmed.
    ///
    /// - Throws: ``SessionError/Code/trust`` when no pairing with `peer` is under way or `code` is not the code shown
    ///   (the pairing goes on: a person may have mistyped).
    public func confirmPairing(with peer: PeerID, code: String) async throws(SessionError) {
        try await callComponents { components throws(SessionError) in
            try components.trust.confirmPairing(with: peer, code: code)
        }
    }

    /// Pairings under way.
    public func pairings() async throws(SessionError) -> [PairingRequest] {
        try await callComponents { $0.trust.requests }
    }

    /// The devices this one trusts.
    public func trustedDevices() async throws(SessionError) -> [TrustedDevice] {
        try await callComponents { $0.trust.devices }
    }

    /// The devices removed from the session, which stay out until they pair again.
    public func removedDevices() async throws(SessionError) -> [RemovedDevice] {
        try await callComponents { $0.trust.removals }
    }

    /// Removes a trusted device from the whole session (or rejects a pairing with it): its links close here, every
    /// member hears it and closes its links too, and it gets back in only by pairing again.
    ///
    /// - Throws: ``SessionError/Code/trust`` when it is not a trusted device, or the change could not be saved
    ///   (nothing changed then).
    public func unpair(_ peer: PeerID) async throws(SessionError) {
        try await callComponents { components throws(SessionError) in try components.trust.unpair(peer) }
    }
}
