import LanSession
import NIOCore
import NIOPosix
import WireCodec

/// The replicated counter: durable local increments, idempotent merges, and anti-entropy between connected peers.
extension BubblesAndCounterCore {
    /// Counts `count` presses of the local peer: saved to `store` first, then sent to every member as the new
    /// absolute count. Succeeds with the local count once both are done; a failed save sends nothing. (Without a
    /// store, ``BubblesAndCounterApp/increment(by:)`` adds to ``localIncrements`` instead.)
    func increment(by count: UInt64, savingTo store: any LocalCountStore) -> EventLoopFuture<UInt64> {
        guard count > 0 else {
            return loop.makeFailedFuture(SessionError(.invalidArgument, "an increment counts at least 1"))
        }
        let promise = loop.makePromise(of: UInt64.self)
        let bound = NIOLoopBound(self, eventLoop: loop)
        incrementsWaiting += 1
        promise.futureResult.whenComplete { _ in bound.value.incrementsWaiting -= 1 }
        incrementTail.whenComplete { _ in
            let application = bound.value
            let target: UInt64
            do throws(SessionError) {
                target = try application.target(adding: count)
            } catch {
                return promise.fail(error)
            }
            let saved =
                store.savesInPlace
                ? application.loop.makeCompletedFuture { try store.save(localCount: target) }
                : NIOThreadPool.singleton.runIfActive(eventLoop: application.loop) {
                    try store.save(localCount: target)
                }
            saved.flatMapErrorThrowing { error in
                throw SessionError(.io, "could not save this peer's count, so nothing was sent: \(error)")
            }
            .flatMapThrowing { try bound.value.commitIncrement(to: target) }
            .cascade(to: promise)
        }
        incrementTail = promise.futureResult.map { _ in }.recover { _ in }
        return promise.futureResult
    }

    /// ``increment(by:savingTo:)`` done at once, when it can be: with a store that saves in place and no increment
    /// before it still waiting, the count is saved and sent to every member before this returns, with no future and
    /// no hop. Nil when it cannot be (nothing was done then).
    func incrementNow(by count: UInt64, savingTo store: any LocalCountStore) throws(SessionError) -> UInt64? {
        guard store.savesInPlace, incrementsWaiting == 0 else { return nil }
        guard count > 0 else { throw SessionError(.invalidArgument, "an increment counts at least 1") }
        let target = try target(adding: count)
        do {
            try store.save(localCount: target)
        } catch {
            throw SessionError(.io, "could not save this peer's count, so nothing was sent: \(error)")
        }
        let local = try commitIncrement(to: target)
        if localCountSendScheduled { sendLocalCount() }  // now, not at the end of the turn
        return local
    }

    /// Raises the replica to the count that increments without a store reached, and sends it at the end of this
    /// turn; queued by the first of them (see ``LocalIncrements``), and done by ``BubblesAndCounterApp/counter()`` before it reads.
    func foldLocalIncrements() {
        let count = localIncrements.startFold()
        guard context.isRunning else { return }
        raiseLocal(to: count)
    }

    private func target(adding count: UInt64) throws(SessionError) -> UInt64 {
        let (target, overflow) = replica.localCount.addingReportingOverflow(count)
        guard !overflow else { throw SessionError(.invalidArgument, "the count would pass \(UInt64.max)") }
        return target
    }

    /// Raises the local count to `target`; it goes to every member at the end of this turn of the loop.
    ///
    /// The count on the wire is absolute, so the increments of one turn coalesce into one message per member and one
    /// event: the members count each of them once all the same.
    private func commitIncrement(to target: UInt64) throws(SessionError) -> UInt64 {
        guard context.isRunning else { throw SessionError(.notRunning, "the session was stopped") }
        raiseLocal(to: target)
        return replica.localCount
    }

    private func raiseLocal(to target: UInt64) {
        guard replica.commitLocal(target), !localCountSendScheduled else { return }
        localCountSendScheduled = true
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.execute {
            let application = bound.value
            if application.localCountSendScheduled { application.sendLocalCount() }  // unless sent meanwhile
        }
    }

    /// Sends the local count to every member, and tells subscribers.
    private func sendLocalCount() {
        localCountSendScheduled = false
        guard context.isRunning else { return }
        let count = replica.localCount
        guard let message = encoded(.counterIncrement(count: count)) else { return }
        context.forEachMember { peer in
            replica.sentLocal(to: peer)  // first: an overflow while sending forgets it again
            try? context.sendReliably(message, to: peer)
        }
        events.yield(.counter(localPeer, count: count, total: counter.total))
    }

    func receivedIncrement(_ count: UInt64, from peer: PeerID) {
        guard replica.receivedIncrement(count, from: peer) else { return }
        events.yield(.counter(peer, count: count, total: counter.total))
    }

    func receivedCounterState(_ entries: [CounterEntry], from peer: PeerID) {
        let result = replica.receivedState(entries, from: peer)
        if let claimed = result.claimedForLocal {
            events.yield(.countClaimedAbove(by: peer, claimed: claimed, local: replica.localCount))
            context.logger.debug(
                "\(context.name(of: peer)) (\(peer)) holds \(claimed) for this peer, which counted \(replica.localCount); ignored",
                metadata: ["peer": "\(peer)"])
        }
        for grown in result.grown {
            events.yield(.counter(grown, count: counter[grown], total: counter.total))
        }
    }

    /// Sends `peer` the counts it may lack, in as many `counterState` messages as the list limit needs.
    func exchangeCounter(with peer: PeerID) {
        let missing = replica.takeMissing(for: peer)
        var start = 0
        while start < missing.count {
            let end = min(start + BubblesAndCounterMessage.maxListEntries, missing.count)
            send(.counterState(Array(missing[start..<end])), to: peer)
            start = end
        }
    }

    /// Anti-entropy: brings every connected peer up to date, at most once per exchange interval.
    func exchangeCounters(now: NIODeadline) {
        guard now - lastCounterExchange >= configuration.counterExchangeTime else { return }
        lastCounterExchange = now
        for peer in context.connectedPeers { exchangeCounter(with: peer) }
    }
}
