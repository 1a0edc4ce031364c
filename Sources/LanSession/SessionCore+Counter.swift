import NIOCore
import NIOPosix
import WireCodec

/// The replicated counter: durable local increments, idempotent merges, and anti-entropy between connected peers.
extension SessionCore {
    /// Counts `count` presses of the local peer: saved first (with a ``LocalCountStore``), then sent to every member
    /// as the new absolute count. Succeeds with the local count once both are done; a failed save sends nothing.
    func increment(by count: UInt64) -> EventLoopFuture<UInt64> {
        guard count > 0 else {
            return loop.makeFailedFuture(SessionError(.invalidArgument, "an increment counts at least 1"))
        }
        guard let store = configuration.localCountStore else {
            return loop.makeCompletedFuture { () throws(SessionError) -> UInt64 in
                try commitIncrement(to: try target(adding: count))
            }
        }
        let promise = loop.makePromise(of: UInt64.self)
        let bound = NIOLoopBound(self, eventLoop: loop)
        incrementTail.whenComplete { _ in
            let core = bound.value
            let target: UInt64
            do throws(SessionError) {
                target = try core.target(adding: count)
            } catch {
                return promise.fail(error)
            }
            NIOThreadPool.singleton.runIfActive(eventLoop: core.loop) { try store.save(localCount: target) }
                .flatMapErrorThrowing { error in
                    throw SessionError(.io, "could not save this peer's count, so nothing was sent: \(error)")
                }
                .flatMapThrowing { try bound.value.commitIncrement(to: target) }
                .cascade(to: promise)
        }
        incrementTail = promise.futureResult.map { _ in }.recover { _ in }
        return promise.futureResult
    }

    private func target(adding count: UInt64) throws(SessionError) -> UInt64 {
        let (target, overflow) = replica.localCount.addingReportingOverflow(count)
        guard !overflow else { throw SessionError(.invalidArgument, "the count would pass \(UInt64.max)") }
        return target
    }

    /// Raises the local count to `target` and sends it to every member.
    private func commitIncrement(to target: UInt64) throws(SessionError) -> UInt64 {
        guard runState != .stopped else { throw SessionError(.notRunning, "the session was stopped") }
        if replica.commitLocal(target) {
            for peer in peers.values where peer.isMember {  // no array per message
                replica.sentLocal(to: peer.id)  // first: an overflow while sending forgets it again
                sendSequenced(.counterIncrement(count: target), to: peer)
            }
            events.yield(.counter(localPeer, count: target, total: counter.total))
        }
        return replica.localCount
    }

    func receivedIncrement(_ count: UInt64, from peer: PeerRecord) {
        guard replica.receivedIncrement(count, from: peer.id) else { return }
        events.yield(.counter(peer.id, count: count, total: counter.total))
    }

    func receivedCounterState(_ entries: [CounterEntry], from peer: PeerRecord) {
        let result = replica.receivedState(entries, from: peer.id)
        if let claimed = result.claimedForLocal {
            logger.warning(
                "\(peer.name) (\(peer.id)) holds \(claimed) for this peer, which counted \(replica.localCount); ignored",
                metadata: ["peer": "\(peer.id)"])
        }
        for grown in result.grown {
            events.yield(.counter(grown, count: counter[grown], total: counter.total))
        }
    }

    /// Sends `peer` the counts it may lack, in as many `counterState` messages as the list limit needs.
    func exchangeCounter(with peer: PeerRecord) {
        let missing = replica.takeMissing(for: peer.id)
        var start = 0
        while start < missing.count {
            let end = min(start + Wire.maxListEntries, missing.count)
            sendSequenced(.counterState(Array(missing[start..<end])), to: peer)
            start = end
        }
    }

    /// Anti-entropy: brings every connected peer up to date, at most once per exchange interval.
    func exchangeCounters(now: NIODeadline) {
        guard now - lastCounterExchange >= configuration.counterExchangeInterval.timeAmount else { return }
        lastCounterExchange = now
        for peer in peers.values where peer.isConnected { exchangeCounter(with: peer) }
    }
}
