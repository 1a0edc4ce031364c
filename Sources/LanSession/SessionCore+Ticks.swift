import NIOCore
import WireCodec

extension SessionCore {
    /// Runs every 50 ms: heartbeats, silence detection, acknowledgements, datagram probes, stalled handshakes, and
    /// the counter's anti-entropy.
    func tick() {
        guard runState == .running else { return }
        let now = NIODeadline.now()
        for link in links.values where link.isOpen {
            if link.phase == .awaitingHello, now - link.openedAt > configuration.livenessTimeout {
                // Whatever answers here does not speak LanSession (or is too slow to): try elsewhere.
                close(link, reason: "no hello within \(configuration.livenessTimeout)")
                continue
            }
            if link.phase != .established {
                // A handshake gets the invitation timeout (a user may be deciding) plus the liveness timeout.
                if now - link.openedAt > configuration.invitationTimeout + configuration.livenessTimeout {
                    close(link, reason: "handshake did not complete")
                }
                continue
            }
            switch link.liveness.check(at: now) {
            case .dead:
                let silence = (now - link.liveness.lastReceived).nanoseconds / 1_000_000
                logger.info("\(link.hello?.displayName ?? "peer") silent for \(silence) ms; closing its link")
                close(link, reason: "silent")
            case .heartbeatDue:
                write(.ping(Ping(nonce: 0, timestamp: nowMicros(now))), on: link)
            case .alive:
                break
            }
        }
        for peer in peers.values where peer.isConnected {
            if peer.reliable.ackDue, let link = peer.link {
                write(.ack(sequence: peer.reliable.makeAck()), on: link)
            }
            probeDatagrams(peer, now: now)
        }
        exchangeCounters(now: now)
    }

    private func probeDatagrams(_ peer: PeerRecord, now: NIODeadline) {
        guard peer.datagramAddress != nil else { return }
        switch peer.route {
        case .probing:
            if let started = peer.probeStarted, now - started > configuration.datagramProbeTimeout {
                logger.notice("datagrams do not get through to \(peer.name); using the reliable link instead")
                peer.route = .fallback
                publishState(of: peer)
            } else if peer.lastProbeSent.map({ now - $0 >= .milliseconds(200) }) ?? true {
                sendDatagram(.ping(Ping(nonce: 0, timestamp: nowMicros(now))), to: peer)
            }
        case .udp:
            if let last = peer.lastDatagramReceived, now - last > configuration.livenessTimeout {
                logger.notice("datagrams stopped getting through to \(peer.name); using the reliable link instead")
                peer.route = .fallback
                publishState(of: peer)
            } else if peer.lastProbeSent.map({ now - $0 >= configuration.heartbeatInterval }) ?? true {
                sendDatagram(.ping(Ping(nonce: 0, timestamp: nowMicros(now))), to: peer)
            }
        case .fallback:
            // Keep probing now and then: the route comes back when datagrams do.
            if peer.lastProbeSent.map({ now - $0 >= configuration.livenessTimeout }) ?? true {
                sendDatagram(.ping(Ping(nonce: 0, timestamp: nowMicros(now))), to: peer)
            }
        }
    }
}
