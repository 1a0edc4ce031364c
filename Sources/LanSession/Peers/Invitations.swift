import NIOCore
import WireCodec

/// What the invitations ask of the session: who invites on a link, and their answer carried out on it.
protocol InvitationsDelegate: AnyObject {
    /// The peer on `link` (one of its links, its hello admitted), as the admission weighs it; nil when there is none.
    func invitee(on link: Link) -> Invitations.Invitee?
    /// Carries out `answer` on `link`.
    func carryOut(_ answer: Invitations.Answer, on link: Link)
    /// Tells the subscribers.
    func emit(_ event: SessionEvent)
}

/// Invitations both ways: those peers sent this one, weighed as the ``Admission`` says, some waiting for the
/// application's answer (with ``InvitationPolicy/ask``), and those the application sent
/// (``Session/invite(_:context:timeout:)``) that wait for the peer's. Each has a deadline on the session's loop; what
/// happens at an application's invitation's deadline is the caller's.
final class Invitations {
    /// Who invites on a link, as the admission weighs it.
    struct Invitee {
        var peer: PeerID
        var name: String
        /// Connected now or before: a member coming back is not asked again.
        var isMember: Bool
        /// Members besides it, and peers accepted whose link is not active yet (docs/wire-format.md, section 11.2),
        /// so that two invitations at once do not both take the last seat.
        var seatsTaken: Int
    }

    /// What the session does on an invitation's link.
    enum Answer: Equatable {
        case accept
        /// Refuse during the handshake, telling the peer `reason`.
        case refuse(DeclineReason, String)
        /// Decline, as the application decided.
        case decline(DeclineReason)
        /// Close without a word.
        case drop(String)
    }

    /// An invitation a peer sent on `link`, waiting for the application's answer.
    struct Incoming {
        let link: Link
        let request: InvitationRequest
        let timeout: Scheduled<Void>
    }

    /// An invitation the application sent, and who waits for its answer.
    struct Outgoing {
        var context: [UInt8]
        var timeout: Duration
        var waiting: [EventLoopPromise<Void>]
        var deadline: Scheduled<Void>
    }

    private let loop: any EventLoop
    /// The admission's rules for invitations (the policy, the seats).
    private let admission: Admission
    private var incoming: [UInt64: Incoming] = [:]
    private var nextID: UInt64 = 1
    private var outgoing: [PeerID: Outgoing] = [:]

    weak var delegate: (any InvitationsDelegate)?

    /// The entries of its tables, by name (``Session/tableSizes()``).
    var tableSizes: [String: Int] { ["invitationsIncoming": incoming.count, "invitationsOutgoing": outgoing.count] }

    init(loop: any EventLoop, admission: Admission) {
        self.loop = loop
        self.admission = admission
    }

    // MARK: - From peers

    /// The dialer's invitation arrived on `link` (this side accepts links): accepted, refused as full, or kept for the
    /// application's answer, as the admission says.
    func consider(_ invitation: Invitation, on link: Link) {
        guard let invitee = delegate?.invitee(on: link) else {
            delegate?.carryOut(.drop("invitation from nobody"), on: link)
            return
        }
        switch admission.consider(invitation, isMember: invitee.isMember, seatsTaken: invitee.seatsTaken) {
        case .accept:
            delegate?.carryOut(.accept, on: link)
        case .full(let detail):
            delegate?.carryOut(.refuse(.full, detail), on: link)
        case .ask(let wait):
            let request = ask(
                link: link, peer: invitee.peer, name: invitee.name, context: invitation.context, wait: wait
            ) { [weak self] id in
                self?.answer(id, decision: .decline(.timedOut))
            }
            delegate?.emit(.invitation(request))
        }
    }

    /// The application answers the invitation `id`; false when there is no such invitation (answered, timed out, or
    /// gone).
    @discardableResult
    func answer(_ id: UInt64, decision: InvitationDecision) -> Bool {
        guard let pending = take(id) else { return false }
        let link = pending.link
        guard link.isOpen, let invitee = delegate?.invitee(on: link) else { return false }
        switch decision {
        case .accept:
            guard admission.hasSeat(seatsTaken: invitee.seatsTaken) else {
                delegate?.carryOut(.refuse(.full, "the session is full (\(admission.maxPeers) peers)"), on: link)
                return true
            }
            delegate?.carryOut(.accept, on: link)
        case .decline(let reason):
            delegate?.emit(.declined(link.peerID, address: link.remoteDescription, reason: reason))
            delegate?.carryOut(.decline(reason), on: link)
        }
        return true
    }

    /// Keeps an invitation from `peer` on `link` for the application's answer; `expire` runs with its id if it is
    /// still unanswered after `wait`.
    func ask(
        link: Link, peer: PeerID, name: String, context: [UInt8], wait: TimeAmount,
        expire: @escaping (UInt64) -> Void
    ) -> InvitationRequest {
        let request = InvitationRequest(id: nextID, peerID: peer, displayName: name, context: context)
        nextID += 1
        let bound = NIOLoopBound(expire, eventLoop: loop)
        let timeout = loop.scheduleTask(in: wait) { bound.value(request.id) }
        incoming[request.id] = Incoming(link: link, request: request, timeout: timeout)
        return request
    }

    /// Takes the invitation `id` to answer it; nil when it is no longer pending.
    func take(_ id: UInt64) -> Incoming? {
        guard let pending = incoming.removeValue(forKey: id) else { return nil }
        pending.timeout.cancel()
        return pending
    }

    /// Drops the invitations that came on `link` (it is gone).
    func drop(on link: Link) {
        for (id, pending) in incoming where pending.link === link {
            pending.timeout.cancel()
            incoming[id] = nil
        }
    }

    /// The invitations waiting for the application's answer, oldest first.
    var requests: [InvitationRequest] {
        incoming.values.map(\.request).sorted { $0.id < $1.id }
    }

    // MARK: - From the application

    /// The application invites `peer`: `promise` succeeds when it accepts and fails when it declines or `expire`
    /// runs after `timeout`. Another invitation of the same peer waits for the same answer.
    func invite(
        _ peer: PeerID, context: [UInt8], timeout: Duration, promise: EventLoopPromise<Void>,
        expire: @escaping () -> Void
    ) {
        if outgoing[peer] != nil {
            outgoing[peer]!.waiting.append(promise)
            return
        }
        let bound = NIOLoopBound(expire, eventLoop: loop)
        let (seconds, attoseconds) = timeout.components
        let deadline = loop.scheduleTask(in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) {
            bound.value()
        }
        outgoing[peer] = Outgoing(context: context, timeout: timeout, waiting: [promise], deadline: deadline)
    }

    /// The application's invitation of `peer`, while unanswered.
    func invitation(of peer: PeerID) -> Outgoing? {
        outgoing[peer]
    }

    /// Ends the application's invitation of `peer`: accepted (`error` nil), declined or timed out. Returns whether
    /// there was one.
    @discardableResult
    func end(_ peer: PeerID, _ error: SessionError?) -> Bool {
        guard let pending = outgoing.removeValue(forKey: peer) else { return false }
        pending.deadline.cancel()
        for promise in pending.waiting {
            if let error { promise.fail(error) } else { promise.succeed() }
        }
        return true
    }

    // MARK: - Stop

    /// Cancels every deadline; what waits for an application's invitation fails with `error`.
    func stop(_ error: SessionError) {
        for pending in incoming.values { pending.timeout.cancel() }
        incoming = [:]
        for peer in Array(outgoing.keys) { end(peer, error) }
    }
}
