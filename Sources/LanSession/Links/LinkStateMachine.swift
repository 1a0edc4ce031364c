import NIOCore
import WireCodec

/// One link's handshake and activation, as a state machine of plain values.
///
/// Each state carries its data. An input — a message received, a decision of the session, a tick of the clock —
/// returns the actions the session carries out: send, ask, deliver, close. The machine does no I/O, holds no
/// references and reads no clock, so it is tested as a value with made-up times.
///
/// ```
/// dialer:    awaitingHello ─hello→ identifying ─admit→ awaitingAnswer ─accept→ ready
/// acceptor:  awaitingHello ─hello→ identifying ─admit→ awaitingInvitation ─invitation→ deciding ─accept→ ready
/// sealed:    identifying ─handshake→ handshaking ─noise…→ (session completes Noise) ─admit→ as above
///            handshaking ─(an untrusted device)→ stranger ─pairing…→ (paired) ─admit→ as above
/// leader:    ready ─activate (sends resume)→ activating ─resume→ active
/// follower:  ready ─resume→ (session answers) respond (sends resume)→ active
/// both:      active ─deactivate→ ready;   any ─bye, decline, violation, timeout, close→ closed
/// ```
///
/// A ready link is handshaken and heartbeated but carries no data: it is a standby path. Of a peer's ready links,
/// the pair's leader (the lower peer id) activates one by sending `resume` on it; the follower answers with its own
/// `resume`, and from then on both send their sequenced messages on that link only and drop the ones that still
/// arrive on any other (the sender resends them after the resume). See docs/wire-format.md, section 3.3.
struct LinkStateMachine {
    /// Which side opened the link.
    enum Role: Hashable, Sendable {
        case dialer
        case acceptor
    }

    enum State: Equatable {
        /// Waiting for the other side's hello.
        case awaitingHello
        /// Hello received; the session decides whether to go on (`admit`) or not (`refuse`).
        case identifying(Hello)
        /// The Noise handshake runs (section 9): only `noise`, `decline` and `bye` are accepted meanwhile.
        case handshaking(Hello)
        /// The handshake proved a device this side does not trust (admission `paired`): it may ask to pair, and
        /// nothing else. `pairing`: a pairing is under way, which gives the link the longer deadline.
        case stranger(Hello, pairing: Bool)
        /// Acceptor: waiting for the invitation.
        case awaitingInvitation(Hello)
        /// Acceptor: the invitation waits for the session's decision.
        case deciding(Hello)
        /// Dialer: invitation sent, waiting for accept or decline.
        case awaitingAnswer(Hello)
        /// Handshaken both ways; a standby path: heartbeats and control messages, no data.
        case ready(Hello, token: UInt64)
        /// Leader: this side sent `resume` to make the link the active one and waits for the answer.
        case activating(Hello, token: UInt64)
        /// The link carries the peer's data.
        case active(Hello, token: UInt64)
        /// Closed or closing; anything more it delivers is ignored.
        case closed
    }

    enum Action: Equatable {
        /// Write this message on the link.
        case send(Message)
        /// A hello arrived: the session checks it and answers with ``admit(invitation:)``, ``handshake()``
        /// or ``refuse(_:_:)``.
        case identify(Hello)
        /// A Noise handshake message arrived: the session reads it, answers with its own, and once the handshake is
        /// complete, with ``admit(invitation:)``, ``becomeStranger()``, ``refuse(_:_:)`` or ``drop(_:)``.
        case handshakeMessage([UInt8])
        /// A pairing step from a stranger.
        case pairing(PairingStep)
        /// Acceptor: an invitation arrived; the session answers with ``accept(token:)`` or ``decline(_:)``.
        case consider(Invitation)
        /// The link is handshaken both ways; `token` tags its datagrams.
        case ready(token: UInt64)
        /// The peer's `resume` arrived: it makes this link its active one (the session answers with
        /// ``respond(_:)`` as follower, or ignores a stale answer as leader).
        case activatedByPeer(Resume)
        /// Leader: the peer answered this side's activation; the link is active.
        case activationAnswered(Resume)
        /// A message for the session: control messages on any handshaken link, commands on the active one.
        case deliver(Message)
        /// A command on a link that is not the active one: not counted; the peer resends it after the resume.
        case dropStale(MessageKind)
        /// The peer said bye; `wasHandshaken` tells a departure from a refusal during the handshake.
        case peerSaidBye(ByeReason, wasHandshaken: Bool)
        /// The peer declined.
        case declined(DeclineReason)
        /// Close the link (after the sends before this action), for this reason.
        case close(String)
    }

    let role: Role
    private(set) var state = State.awaitingHello

    init(role: Role) {
        self.role = role
    }

    /// The peer's hello, once received.
    var hello: Hello? {
        switch state {
        case .awaitingHello, .closed: nil
        case .identifying(let hello), .handshaking(let hello), .awaitingInvitation(let hello),
            .deciding(let hello), .awaitingAnswer(let hello), .stranger(let hello, _):
            hello
        case .ready(let hello, _), .activating(let hello, _), .active(let hello, _): hello
        }
    }

    /// The datagram token agreed in the handshake.
    var token: UInt64? {
        switch state {
        case .ready(_, let token), .activating(_, let token), .active(_, let token): token
        default: nil
        }
    }

    /// Handshaken both ways (a standby or the active path).
    var isHandshaken: Bool { token != nil }

    /// Carries the peer's data.
    var isActive: Bool {
        if case .active = state { return true }
        return false
    }

    var isActivating: Bool {
        if case .activating = state { return true }
        return false
    }

    var isClosed: Bool { state == .closed }

    /// Has not yet shown that it belongs: no hello, no complete handshake, or (acceptor) no invitation. The session
    /// caps such links.
    var isUnproven: Bool {
        switch state {
        case .awaitingHello, .identifying, .handshaking, .awaitingInvitation: true
        default: false
        }
    }

    /// An untrusted device's link, which may only pair.
    var isStranger: Bool {
        if case .stranger = state { return true }
        return false
    }

    // MARK: - Messages from the peer

    mutating func received(_ message: Message) -> [Action] {
        switch (message, state) {
        case (_, .closed):
            return []
        case (.hello(let hello), .awaitingHello):
            state = .identifying(hello)
            return [.identify(hello)]
        case (.hello, _):
            return violation("second hello")
        case (.decline(let reason), _):
            state = .closed
            return [.declined(reason), .close("declined (\(reason))")]
        case (.bye(let reason), let current):
            let handshaken = isHandshaken
            state = .closed
            if case .awaitingHello = current { return [.close("bye before hello")] }
            return [.peerSaidBye(reason, wasHandshaken: handshaken), .close("bye (\(reason))")]
        case (.noise(let bytes), .handshaking):
            return [.handshakeMessage(bytes)]
        case (.noise, _):
            return violation("unexpected noise message")
        case (.pairing(let step), .stranger(let hello, _)):
            if step == .request { state = .stranger(hello, pairing: true) }
            return [.pairing(step)]
        case (.pairing, _):
            return violation("pairing from a device that is not a stranger")
        case (.ping, .stranger), (.pong, .stranger):
            return [.deliver(message)]
        case (.invitation, .stranger) where role == .acceptor:
            // The dialer trusts this side, which does not trust it: it is told so, not blamed for a protocol error.
            return refuse(.notTrusted, "an invitation from an untrusted device")
        case (_, .awaitingHello), (_, .identifying), (_, .handshaking), (_, .stranger):
            // Before the hello was admitted (and before the handshake proved a trusted device) nothing else counts.
            return violation("\(message.kind) before the handshake")
        case (.invitation(let invitation), .awaitingInvitation(let hello)) where role == .acceptor:
            state = .deciding(hello)
            return [.consider(invitation)]
        case (.invitation, _):
            return violation("unexpected invitation")
        case (.accept(let accept), .awaitingAnswer(let hello)) where role == .dialer:
            state = .ready(hello, token: accept.linkToken)
            return [.ready(token: accept.linkToken)]
        case (.accept, _):
            return violation("unexpected accept")
        case (.resume(let resume), .activating(let hello, let token)):
            state = .active(hello, token: token)
            return [.activationAnswered(resume)]
        case (.resume(let resume), .ready), (.resume(let resume), .active):
            return [.activatedByPeer(resume)]
        case (.resume, _):
            return violation("unexpected resume")
        case (.ping, _), (.pong, _):
            return [.deliver(message)]
        case (.ack, _), (.members, _), (.trust, _):
            return isHandshaken ? [.deliver(message)] : violation("\(message.kind) before the handshake completed")
        default:
            // Commands (sequenced kinds).
            if isActive { return [.deliver(message)] }
            if isHandshaken { return [.dropStale(message.kind)] }
            return violation("\(message.kind) before the handshake completed")
        }
    }

    private mutating func violation(_ what: String) -> [Action] {
        state = .closed
        return [.send(.bye(.protocolError)), .close(what)]
    }

    // MARK: - Decisions of the session

    /// The hello is acceptable so far: the Noise handshake follows (the session writes its messages).
    mutating func handshake() {
        guard case .identifying(let hello) = state else { return }
        state = .handshaking(hello)
    }

    /// The handshake proved a device this side does not trust: it may only pair.
    mutating func becomeStranger() {
        guard case .handshaking(let hello) = state else { return }
        state = .stranger(hello, pairing: false)
    }

    /// This side asks the stranger to pair (or answers its request).
    mutating func startPairing() {
        guard case .stranger(let hello, _) = state else { return }
        state = .stranger(hello, pairing: true)
    }

    /// The hello is acceptable (with encryption, the handshake complete and the device trusted): the dialer invites,
    /// the acceptor waits for the invitation.
    mutating func admit(invitation: Invitation) -> [Action] {
        let hello: Hello
        switch state {
        case .identifying(let received), .handshaking(let received), .stranger(let received, _): hello = received
        default: return []
        }
        switch role {
        case .dialer:
            state = .awaitingAnswer(hello)
            return [.send(.invitation(invitation))]
        case .acceptor:
            state = .awaitingInvitation(hello)
            return []
        }
    }

    /// Refuses the peer during the handshake, telling it why (`detail` is for the log).
    mutating func refuse(_ reason: DeclineReason, _ detail: String) -> [Action] {
        guard !isClosed else { return [] }
        state = .closed
        return [.send(.decline(reason)), .close(detail)]
    }

    /// Closes without a word (for example a link to this very peer).
    mutating func drop(_ detail: String) -> [Action] {
        guard !isClosed else { return [] }
        state = .closed
        return [.close(detail)]
    }

    /// Acceptor: accepts the invitation with a datagram token.
    mutating func accept(token: UInt64) -> [Action] {
        guard case .deciding(let hello) = state else { return [] }
        state = .ready(hello, token: token)
        return [.send(.accept(Accept(linkToken: token))), .ready(token: token)]
    }

    /// Acceptor: declines the invitation.
    mutating func decline(_ reason: DeclineReason) -> [Action] {
        guard case .deciding = state else { return [] }
        return refuse(reason, "invitation declined (\(reason))")
    }

    /// Leader: makes this link the active one by sending `resume`; it is active once the answer arrives.
    mutating func activate(_ resume: Resume) -> [Action] {
        guard case .ready(let hello, let token) = state else { return [] }
        state = .activating(hello, token: token)
        return [.send(.resume(resume))]
    }

    /// Follower: answers the peer's activation with this side's `resume`; the link is active.
    mutating func respond(_ resume: Resume) -> [Action] {
        switch state {
        case .ready(let hello, let token), .active(let hello, let token):
            state = .active(hello, token: token)
            return [.send(.resume(resume))]
        default:
            return []
        }
    }

    /// Another link became the active one: this one is a standby again.
    mutating func deactivate() {
        switch state {
        case .activating(let hello, let token), .active(let hello, let token):
            state = .ready(hello, token: token)
        default:
            break
        }
    }

    /// Leaves: says bye on a handshaken link, then closes.
    mutating func leave(_ reason: ByeReason) -> [Action] {
        guard !isClosed else { return [] }
        let handshaken = isHandshaken
        state = .closed
        if handshaken { return [.send(.bye(reason)), .close("bye (\(reason))")] }
        return [.send(.decline(.duplicateLink)), .close("replaced during the handshake")]
    }

    /// The channel closed.
    mutating func channelClosed() {
        state = .closed
    }

    // MARK: - Time

    /// Deadlines of the handshake: proof of belonging (a hello, the Noise handshake, for an acceptor the
    /// invitation) within `proofTimeout` of opening, the whole handshake within `handshakeTimeout` (an invitation
    /// may wait for a person); an untrusted device's link lives `strangerTimeout`, or `pairingTimeout` once a pairing
    /// is under way (it waits for people on both sides).
    mutating func tick(
        openFor elapsed: TimeAmount, proofTimeout: TimeAmount, handshakeTimeout: TimeAmount,
        strangerTimeout: TimeAmount = .seconds(10), pairingTimeout: TimeAmount = .seconds(120)
    ) -> [Action] {
        switch state {
        case .stranger(_, let pairing):
            let limit = pairing ? pairingTimeout : strangerTimeout
            guard elapsed > limit else { return [] }
            state = .closed
            return [
                .send(.decline(.notTrusted)),
                .close(pairing ? "pairing did not complete within \(limit)" : "an untrusted device did not pair"),
            ]
        case .awaitingHello, .identifying, .handshaking, .awaitingInvitation:
            guard elapsed > proofTimeout else { return [] }
            let what = state == .awaitingHello ? "no hello" : "handshake not proved"
            state = .closed
            return [.close("\(what) within \(proofTimeout)")]
        case .deciding, .awaitingAnswer:
            guard elapsed > handshakeTimeout else { return [] }
            state = .closed
            return [.close("handshake did not complete within \(handshakeTimeout)")]
        default:
            return []
        }
    }
}
