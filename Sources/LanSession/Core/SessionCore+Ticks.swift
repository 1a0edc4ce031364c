import NIOCore
import WireCodec

extension SessionCore {
    /// Runs every 50 ms: handshake deadlines, heartbeats and silence on every link, failover to a standby path,
    /// acknowledgements, datagram probes, and the anti-entropy of the counter and of membership.
    func tick() {
        guard runState == .running else { return }
        let now = NIODeadline.now()
        for link in Array(links.values) where link.isOpen {
            guard link.machine.isHandshaken else {
                perform(
                    link.machine.tick(
                        openFor: now - link.openedAt, proofTimeout: configuration.proofTimeout.timeAmount,
                        handshakeTimeout: configuration.invitationTimeout.timeAmount
                            + configuration.livenessTimeout.timeAmount),
                    on: link)
                continue
            }
            switch link.liveness.check(at: now) {
            case .dead:
                let silence = (now - link.liveness.lastReceived).nanoseconds / 1_000_000
                logger.debug(
                    "\(link.hello?.displayName ?? "peer") silent for \(silence) ms; closing its link",
                    metadata: ["path": "\(link.path)"])
                close(link, reason: "silent")
            case .heartbeatDue:
                write(.ping(Ping(nonce: 0, timestamp: nowMicros(now))), on: link)
            case .alive:
                break
            }
        }
        for peer in peers.values where peer.isConnected || peer.active == nil {
            // A leader keeps choosing: a peer with a handshaken link but none active yet gets one here too.
            if isLeader(of: peer), !peer.links.isEmpty { choosePath(for: peer, now: now) }
            guard peer.isConnected else { continue }
            if peer.reliable.ackDue, let link = peer.dataLink {
                peer.unacknowledgedBytes = 0
                write(.ack(sequence: peer.reliable.makeAck()), on: link)
            }
            probeDatagrams(peer, now: now)
        }
        applications.forEach { $0.tick(now: now) }
        expirePings(now: now)
        exchangeMembers(now: now)
    }
}
