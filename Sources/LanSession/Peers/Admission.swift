import NIOCore
import WireCodec

/// Who gets past a link's handshake, as a plain value: a hello is checked against the session (its protocol version,
/// its session name, this very peer, encryption and the pre-shared key), and an invitation against the policy and
/// the room left. It counts the handshakes that failed.
struct Admission {
    /// What to do with a hello.
    enum HelloVerdict: Equatable {
        /// Refuse: `reason` is told to the peer, `detail` is for the log.
        case refuse(DeclineReason, detail: String)
        /// It is this very peer (an endpoint of its own, reached through a record): close without a word.
        case ourselves
        /// On to the Noise handshake.
        case handshake
        /// On to the invitation.
        case admit
    }

    /// What to do with an invitation.
    enum InvitationVerdict: Equatable {
        case accept
        /// Refuse: the session is full.
        case full(detail: String)
        /// Ask the application, for at most `wait`.
        case ask(wait: TimeAmount)
    }

    let localPeer: PeerID
    let sessionName: String
    /// Links run the Noise handshake.
    let encrypted: Bool
    /// The handshake mixes in the session's pre-shared key (admission `secret`).
    let preSharedKey: Bool
    let policy: InvitationPolicy
    /// Most members besides this peer.
    let maxPeers: Int
    /// How long this side gives itself to decide on an invitation.
    let invitationTimeout: TimeAmount
    /// Handshakes refused: no encryption where it is required, another pre-shared key setting, a handshake message
    /// that failed, a key that is not the claimed peer id's.
    private(set) var failedHandshakes = 0

    init(configuration: SessionConfiguration) {
        localPeer = configuration.peerID
        sessionName = configuration.sessionName
        encrypted = configuration.isEncrypted
        preSharedKey = configuration.secret != nil
        policy = configuration.invitationPolicy
        maxPeers = configuration.maxPeers
        invitationTimeout = configuration.invitationTimeout.timeAmount
    }

    /// Checks a hello; a refusal for encryption or the pre-shared key counts as a failed handshake.
    mutating func check(_ hello: Hello) -> HelloVerdict {
        guard hello.protocolVersion == Wire.protocolVersion else {
            return .refuse(
                .versionMismatch,
                detail: "protocol version \(hello.protocolVersion), this peer speaks \(Wire.protocolVersion)")
        }
        guard hello.sessionName == sessionName else {
            return .refuse(
                .wrongSession, detail: "session \"\(hello.sessionName)\", this peer is in \"\(sessionName)\"")
        }
        guard hello.peerID != localPeer, hello.peerID.rawValue != 0 else { return .ourselves }
        let encrypts = hello.capabilities.contains(.encryption)
        guard encrypts == encrypted else {
            failedHandshakes += 1
            return .refuse(
                .authenticationFailed,
                detail: encrypted
                    ? "it does not encrypt; this peer requires encryption"
                    : "it encrypts; this peer runs insecure links")
        }
        guard encrypted else { return .admit }
        guard hello.capabilities.contains(.preSharedKey) == preSharedKey else {
            failedHandshakes += 1
            return .refuse(
                .authenticationFailed,
                detail: preSharedKey
                    ? "it has no secret; this session admits by one" : "it admits by a secret; this peer does not")
        }
        return .handshake
    }

    /// The handshake failed (a message that did not decrypt, a key that is not the claimed peer id's).
    mutating func handshakeFailed() {
        failedHandshakes += 1
    }

    /// Considers an invitation from a peer that is a member already (`isMember`: connected now or before) or not,
    /// while `seatsTaken` other members take part.
    func consider(_ invitation: Invitation, isMember: Bool, seatsTaken: Int) -> InvitationVerdict {
        if isMember { return .accept }  // a member coming back, or another path to one, is not asked again
        guard seatsTaken < maxPeers else { return .full(detail: "the session is full (\(maxPeers) peers)") }
        switch policy {
        case .acceptAll:
            return .accept
        case .ask:
            // The inviter's timeout when it is the shorter: it stops waiting then, and nothing stale stays listed.
            return .ask(wait: min(invitationTimeout, .milliseconds(Int64(max(1, invitation.timeoutMilliseconds)))))
        }
    }

    /// Whether the application's acceptance of an invitation still fits, with `seatsTaken` other members.
    func hasSeat(seatsTaken: Int) -> Bool {
        seatsTaken < maxPeers
    }
}
