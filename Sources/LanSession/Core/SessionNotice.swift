/// Something about a session an operator may want to know although no peer's state changed: links refused for what
/// they sent, strangers refused, resources running short, the unreliable channel given up on. The session logs only
/// at debug and trace; these reach its subscribers as ``SessionEvent/notice(_:)``, and the application decides what
/// its operator sees. Those that a flood could repeat come rate-limited: the first ten, then every thousandth, each
/// with the count so far.
public enum SessionNotice: Hashable, Sendable, CustomStringConvertible {
    /// A link was closed for what it sent: a malformed frame, a sealed record that did not open, a message out of
    /// place. The session serves everyone else.
    case linkRejected(address: String, reason: String)
    /// A stranger's handshake failed for the session's secret: it has none, its proof did not match, or it has one
    /// where the session has none.
    case authenticationFailed(address: String, detail: String, count: Int)
    /// An accepted link was closed at once: too many links have not proved themselves yet, in all or from its address.
    case unprovenLinkRefused(address: String, reason: String, count: Int)
    /// Accepting a link failed for want of file descriptors; the oldest link that had not proved itself was closed to
    /// make room, when there was one.
    case descriptorsExhausted(count: Int, closedOne: Bool)
    /// No datagram socket could be opened: unreliable messages use the reliable links.
    case datagramsUnavailable(port: Int, reason: String)
    /// A peer's datagrams do not get through although it answers on its link: its unreliable messages use the link.
    case datagramsFallBack(PeerID, name: String)
    /// A peer's replay buffer is full (it is away, or slow to acknowledge): state messages to it are held back and its
    /// applications are brought up to date by their state once it acknowledges; payloads wait and are never dropped.
    case replayBufferOverflowed(PeerID, name: String)
    /// A device that is not paired with this one linked (admission ``AdmissionMode/paired``, the default): its link
    /// stays open only for pairing, so it does not join until the two devices pair
    /// (``Session/requestPairing(with:)``), or both sessions admit by secret or openly.
    case notPaired(PeerID, name: String, fingerprint: String)
    /// The trusted devices could not be saved (a full disk, say): the file keeps the previous set; the next change
    /// saves again.
    case trustNotSaved(detail: String)

    public var description: String {
        switch self {
        case .linkRejected(let address, let reason):
            "closing link \(address): \(reason)"
        case .authenticationFailed(let address, let detail, let count):
            "refusing \(address): \(detail) (\(count) refused so far)"
        case .unprovenLinkRefused(let address, let reason, let count):
            "closing an accepted link from \(address) at once: \(reason) (\(count) so far)"
        case .descriptorsExhausted(let count, let closedOne):
            "out of file descriptors accepting a connection (\(count) times so far); "
                + (closedOne ? "closing the oldest unproven one" : "no unproven connection to close")
        case .datagramsUnavailable(let port, let reason):
            "no datagram socket on port \(port): \(reason); using the reliable link only"
        case .datagramsFallBack(let peer, let name):
            "datagrams do not get through to \(name.isEmpty ? "\(peer)" : "\(name) (\(peer))"), though it answers on its link; using the link instead"
        case .replayBufferOverflowed(let peer, let name):
            "the replay buffer for \(name.isEmpty ? "\(peer)" : "\(name) (\(peer))") is full: state messages to it are held back (payloads wait), and it is re-synchronised once it acknowledges"
        case .notPaired(let peer, let name, let fingerprint):
            "\(name.isEmpty ? "" : "\(name) ")(\(peer), \(fingerprint)) is not paired with this device: admission is paired, so it joins once the two devices pair (or both admit by secret, or openly)"
        case .trustNotSaved(let detail):
            "cannot save the trusted devices: \(detail); the file keeps the previous set"
        }
    }
}
