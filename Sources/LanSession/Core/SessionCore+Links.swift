import LinkCrypto
import NIOCore
import WireCodec

/// Links as the core sets them up and carries their handshake out: the pipeline, the hello, the caps on links that
/// have not proved themselves, the hello checked (``Admission``), the Noise handshake (``SessionCore+Trust``), the
/// link made one of its peer's (``PathKeeper``: a restart, a duplicate on its path).
extension SessionCore: LinkEvents {
    /// A link's channel became active: it is the session's from now on, and says hello (unless a cap refuses it).
    func linkOpened(
        channel: any Channel, role: LinkStateMachine.Role, transport: any Transport, endpoint: Endpoint?,
        intendedPeer: PeerID?, security: LinkSecurity?
    ) -> Link {
        let liveness = Liveness(
            heartbeatInterval: configuration.heartbeatInterval.timeAmount,
            timeout: configuration.livenessTimeout.timeAmount, now: .now())
        let link = Link(
            channel: channel, role: role, transport: transport, endpoint: endpoint, intendedPeer: intendedPeer,
            liveness: liveness, security: security)
        links.add(link)
        guard isRunningNow else {
            perform(link.step { $0.drop("session is not running") }, on: link)
            return link
        }
        if role == .acceptor, let refusal = links.refusal(forAccepted: link) {
            let count = links.refusedUnproven
            logger.debug(
                "closing an accepted link at once: \(refusal) (\(count) so far)",
                metadata: ["link": "\(link.remoteDescription)"])
            if NoticeThrottle.isReported(count) {
                events.yield(
                    .notice(.unprovenLinkRefused(address: link.remoteDescription, reason: refusal, count: count)))
            }
            perform(link.step { $0.drop(refusal) }, on: link)
            return link
        }
        let hello = localHello(for: link)
        if let security {
            do {
                try security.remember(sent: hello)
            } catch {
                logger.debug("cannot encode the hello: \(error)")
                perform(link.step { $0.drop("cannot encode the hello") }, on: link)
                return link
            }
        }
        writer.write(.hello(hello), on: link)
        return link
    }

    /// Accept failed for want of descriptors: the oldest accepted link that has not proved itself goes, so that the
    /// next accept succeeds instead of failing again at once.
    func descriptorsExhausted() {
        let oldest = links.oldestUnprovenForExhaustion()
        let notice = SessionNotice.descriptorsExhausted(count: links.exhaustedAccepts, closedOne: oldest != nil)
        logger.debug("\(notice)")
        if NoticeThrottle.isReported(links.exhaustedAccepts) { events.yield(.notice(notice)) }
        guard let oldest else { return }
        perform(oldest.step { $0.drop("out of descriptors: the oldest unproven connection goes") }, on: oldest)
    }

    /// A link's pipeline failed: a malformed frame or a sealed record refused closes that link only, and is told.
    func linkFailed(_ link: Link, error: any Error) {
        if let wire = error as? WireError {
            rejected(link, "malformed frame: \(wire)")
        } else if let crypto = error as? LinkCryptoError {
            rejected(link, "sealed record refused: \(crypto)")
        } else {
            logger.debug("link \(link.remoteDescription) failed: \(error)")
        }
    }

    /// `link` is closed for what it sent: logged, and told to the subscribers (the first ten, then every thousandth).
    func rejected(_ link: Link, _ reason: String) {
        let (_, report) = events.countNotice(.rejectedLink)
        logger.debug(
            "closing link \(link.remoteDescription): \(reason)",
            metadata: ["peer": "\(link.peerID.map { "\($0)" } ?? "?")"])
        if report { events.yield(.notice(.linkRejected(address: link.remoteDescription, reason: reason))) }
    }

    /// Closes `link`, ignoring whatever it still delivers; ``linkClosed(_:)`` settles the rest.
    func close(_ link: Link, reason: String) {
        logger.debug("closing link", metadata: ["link": "\(link.remoteDescription)", "reason": "\(reason)"])
        link.step { $0.channelClosed() }
        link.channel.close(promise: nil)
    }

    // MARK: - Handshake

    /// A hello arrived on `link`: refused (another version or session), dropped (this very peer), or on to the Noise
    /// handshake (or, on insecure links, the invitation).
    func identify(_ hello: Hello, on link: Link) {
        link.identified(by: hello)
        switch admissionVerdict(on: hello) {
        case .refuse(let reason, let detail):
            refuse(link, hello: hello, reason: reason, detail)
        case .ourselves:
            if let endpoint = link.endpoint { dialler.forgetEndpoint(endpoint) }
            perform(link.step { $0.drop("this is ourselves") }, on: link)
        case .handshake:
            trust.beginHandshake(hello, on: link)
        case .admit:
            admit(hello, on: link)
        }
    }

    /// The hello is admitted (with encryption, the device proved and trusted): the link becomes one of its peer's,
    /// and the invitation goes on.
    func admit(_ hello: Hello, on link: Link) {
        if let intended = link.intendedPeer, intended != hello.peerID {
            // The endpoint leads to another peer (a stale or forged record): a failed dial for the intended one.
            logger.debug("dialled \(link.remoteDescription) for \(intended), found \(hello.peerID)")
            if let endpoint = link.endpoint, peers[intended] != nil {
                dialler.disproved(endpoint, for: intended)
                dialler.dialEnded(endpoint, for: intended, failed: true)
            }
            link.forgetIntendedPeer()
        }
        let peer = peers.record(for: hello.peerID)
        let restarted = peer.admitted(hello, publicKey: link.publicKey, trust: link.trust)
        link.admitted(hello)
        if let endpoint = link.endpoint { dialler.staticEndpoint(endpoint, isPeer: peer.id) }
        guard keeper.admit(link, to: peer, restarted: restarted) else { return }
        if peer.connecting() { reporter.publishState(of: peer) }
        reporter.publishLink(link, of: peer)
        let invite = invitations.invitation(of: peer.id)
        perform(
            link.step {
                $0.admit(
                    invitation: Invitation(
                        context: invite?.context ?? configuration.invitationContext,
                        timeoutMilliseconds: UInt32(
                            clamping: (invite?.timeout ?? configuration.invitationTimeout).nanoseconds / 1_000_000)))
            },
            on: link)
    }

    /// A stranger's handshake failed: logged, and told to the subscribers (the first ten, then every thousandth).
    func authenticationRefused(_ link: Link, _ detail: String) {
        let (count, report) = events.countNotice(.refusedHandshake)
        let notice = SessionNotice.authenticationFailed(address: link.remoteDescription, detail: detail, count: count)
        logger.debug("\(notice)")
        if report { events.yield(.notice(notice)) }
    }

    /// Refuses the peer on `link` during the handshake, telling it why.
    func refuse(_ link: Link, hello: Hello?, reason: DeclineReason, _ detail: String) {
        if reason == .authenticationFailed {
            // Strangers: no declined event, but a notice, rate-limited (a flood must not flood the subscribers).
            authenticationRefused(link, detail)
            return perform(link.step { $0.refuse(reason, detail) }, on: link)
        }
        logger.debug("refusing \(hello?.displayName ?? "a peer") at \(link.remoteDescription): \(detail)")
        events.yield(.declined(hello?.peerID, address: link.remoteDescription, reason: reason))
        if let endpoint = link.endpoint, reason == .versionMismatch || reason == .wrongSession {
            dialler.removeStatic(endpoint)  // as when the peer declines so: it will not change by itself
        }
        perform(link.step { $0.refuse(reason, detail) }, on: link)
    }
}
