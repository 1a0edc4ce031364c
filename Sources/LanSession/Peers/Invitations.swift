import NIOCore
import WireCodec

/// Invitations both ways: those peers sent this one that wait for the application's answer (with
/// ``InvitationPolicy/ask``), and those the application sent (``Session/invite(_:context:timeout:)``) that wait for the
/// peer's. Each has a deadline on the session's loop; what happens at it is the delegate's.
final class Invitations {
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
    private var incoming: [UInt64: Incoming] = [:]
    private var nextID: UInt64 = 1
    private var outgoing: [PeerID: Outgoing] = [:]

    init(loop: any EventLoop) {
        self.loop = loop
    }

    // MARK: - From peers

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
