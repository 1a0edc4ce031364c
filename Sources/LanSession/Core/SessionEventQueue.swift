import NIOCore

/// The session's events on their way to its subscribers, on the session's loop: the application messages of one
/// read of a link go as one ``SessionEvent/messages(_:)``, which goes before any event that comes after it, so that
/// every subscriber sees what happened in the order it happened.
///
/// The link's handler ends each read with ``endOfRead()``; datagrams go at once, each a batch of its own. Notices a
/// flood could repeat are counted here, and only some passed on (``NoticeThrottle``).
final class SessionEventQueue {
    let fanout: EventFanout<SessionEvent>
    private var throttle = NoticeThrottle()
    // The batch of the read: changed for every message, by this class alone and never across a call that could
    // reach it again, so not checked for exclusive access at run time.
    @exclusivity(unchecked) private var batch: [ByteBuffer] = []
    @exclusivity(unchecked) private var from = PeerID(0)
    @exclusivity(unchecked) private var reliable = true
    /// Messages in the last batch: the next one is made that large at once, so that it grows by no more allocations.
    @exclusivity(unchecked) private var lastBatchSize = 16

    init(fanout: EventFanout<SessionEvent>) {
        self.fanout = fanout
    }

    /// Gives `event` to every subscriber, after the messages received before it.
    func yield(_ event: SessionEvent) {
        flush()
        fanout.yield(event)
    }

    /// Adds a message from `peer` to the batch of this read.
    func yieldData(_ payload: ByteBuffer, from peer: PeerID, reliable: Bool) {
        if !batch.isEmpty, peer != from || reliable != self.reliable { flush() }
        if batch.isEmpty {
            batch.reserveCapacity(lastBatchSize)
            from = peer
            self.reliable = reliable
        }
        batch.append(payload)
    }

    /// A read ended: its messages go to the subscribers.
    func flush() {
        guard !batch.isEmpty else { return }
        let messages = batch
        batch = []
        lastBatchSize = max(16, messages.count)
        fanout.yield(.messages(ReceivedMessages(from: from, reliable: reliable, messages: messages)))
    }

    /// Counts one more notice of `kind`: how many so far, and whether this one is passed on.
    func countNotice(_ kind: NoticeThrottle.Kind) -> (count: Int, report: Bool) {
        throttle.count(kind)
    }

    /// Ends every subscriber's stream, after what is left.
    func finish() {
        flush()
        fanout.finish()
    }
}

extension SessionEvent {
    /// The messages of a batch one by one, for subscribers that take them so; nil for any other event.
    @Sendable static func split(_ event: SessionEvent) -> [SessionEvent]? {
        guard case .messages(let batch) = event else { return nil }
        return batch.messages.map { .data(from: batch.from, bytes: $0, reliable: batch.reliable) }
    }
}
