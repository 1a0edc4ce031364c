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
}
