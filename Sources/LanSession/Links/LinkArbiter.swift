import WireCodec

/// Decides which of two links to the same peer survives, the same way on both sides.
///
/// Both peers may dial each other at once, or one may redial before the other noticed its old link died. The rule
/// depends only on peer ids, so both sides keep the same link and neither flaps:
/// - links opened by different dialers: keep the one dialled by the lower peer id;
/// - links opened by the same dialer: keep the newer one (the dialer gave up on the older).
enum LinkArbiter {
    /// Whether a new link replaces an existing one to the same peer.
    static func keepsNewLink(local: PeerID, peer: PeerID, newDialer: PeerID, oldDialer: PeerID) -> Bool {
        newDialer == oldDialer || newDialer == min(local, peer)
    }

    /// What becomes of two links to one peer on the same path.
    enum Verdict: Hashable {
        /// The new link is refused; the one dialled by `keeping` stays.
        case refuseNew(keeping: PeerID)
        /// The new link replaces the older one.
        case replaceOld
    }

    /// The verdict on a new link of `role` to `peer` that has an older one (of `oldRole`) on its path.
    static func verdict(
        local: PeerID, peer: PeerID, newRole: LinkStateMachine.Role, oldRole: LinkStateMachine.Role
    ) -> Verdict {
        let oldDialer = oldRole == .dialer ? local : peer
        let newDialer = newRole == .dialer ? local : peer
        return keepsNewLink(local: local, peer: peer, newDialer: newDialer, oldDialer: oldDialer)
            ? .replaceOld : .refuseNew(keeping: oldDialer)
    }
}
