import LinkCrypto
import NIOCore
import WireCodec

/// Something that happened in a session.
public enum SessionEvent: Hashable, Sendable {
    /// A peer's state for applications changed: one event per change, the reason included when it is not
    /// connected. The simple view of ``peerState(_:)``, ``peerConnected(_:name:)``, ``peerLost(_:)`` and
    /// ``peerLeft(_:reason:)``.
    case peerChanged(PeerID, PeerConnectionState)
    /// A peer changed state; the full snapshot.
    case peerState(PeerInfo)
    /// A link to a peer completed its handshake.
    case peerConnected(PeerID, name: String)
    /// A connected peer has no link left: they broke or went silent.
    case peerLost(PeerID)
    /// A link of a peer was added, removed, or changed between active and standby.
    case linkChanged(PeerID, LinkInfo)
    /// A peer left on purpose (it said bye).
    case peerLeft(PeerID, reason: ByeReason)
    /// An invitation of ours was declined, or a peer was refused during the handshake.
    case declined(PeerID?, address: String, reason: DeclineReason)
    /// Someone asks to join (with ``InvitationPolicy/ask``).
    case invitation(InvitationRequest)
    /// Messages from a peer were lost for good (it dropped them from its replay buffer: this implementation never
    /// does, another may); state was re-synchronised.
    case resynchronised(PeerID, lost: UInt64)
    /// A peer restarted before it acknowledged `messages` data messages sent to it: its previous incarnation may or
    /// may not have handed them to its application. (Data it was never sent goes to the new incarnation.)
    case unacknowledged(PeerID, messages: UInt64)
    /// An application's message from a peer, as sent with ``Session/send(_:to:mode:)-(ByteBuffer,_,_)``: for a
    /// subscriber that takes messages one by one (``DataDelivery/eachMessage``). `bytes` is a slice of the buffer the
    /// message was read or opened into.
    case data(from: PeerID, bytes: ByteBuffer, reliable: Bool)
    /// Application messages from a peer that arrived together, in order: for a subscriber that takes batches
    /// (``DataDelivery/batches``).
    case messages(ReceivedMessages)
    /// A peer opened a byte stream to this one: read it (once) to take its bytes.
    case streamOpened(IncomingByteStream)
    /// A resource transfer (a file) started, progressed (at most every 100 ms), finished, failed or was cancelled;
    /// on both sides.
    case transfer(TransferProgress)
    /// A connection to an endpoint given to ``Session/connect(to:)`` failed; it is retried with a growing delay.
    case connectFailed(Endpoint, reason: String)
    /// Something an operator may want to know (see ``SessionNotice``).
    case notice(SessionNotice)
    /// A device asks to pair, or this one asked: both show ``PairingRequest/code``; confirm with
    /// ``Session/confirmPairing(with:code:)`` when the codes match, or reject with ``Session/unpair(_:)``.
    case pairingRequested(PairingRequest)
    /// A pairing was made: the device is trusted.
    case paired(TrustedDevice)
    /// A pairing ended without being made: rejected on either side, or timed out.
    case pairingEnded(PeerID, reason: String)
    /// A device got in on a trusted member's introduction.
    case introduced(TrustedDevice)
    /// A device was removed, here or by `by` on another member: its links are closed.
    case unpaired(PeerID, by: PeerID)
    /// This subscriber fell behind: so many events were not kept for it (its buffer was full). Read the state
    /// afresh.
    case eventsMissed(Int)
}
