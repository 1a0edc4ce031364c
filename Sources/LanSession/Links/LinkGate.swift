import LinkCrypto
import Logging
import NIOCore
import WireCodec

/// What ``LinkGate`` asks of the core: whether the session runs, and a link's actions carried out.
protocol LinkGateDelegate: AnyObject {
    /// Whether the session runs now (started, not stopping).
    var isRunningNow: Bool { get }
    /// Carries out a link's actions, in order.
    func perform(_ actions: [LinkStateMachine.Action], on link: Link)
}

/// Links from their opening until they are a peer's: the hello, the caps on links that have not proved themselves,
/// the hello checked (``Admission``), the Noise handshake handed to ``TrustKeeper``, the link made one of its peer's
/// (``PathKeeper``), refusals told; and each link's deadlines and heartbeats.
final class LinkGate {
    private let configuration: SessionConfiguration
    private let logger: Logger
    private let events: SessionEventQueue
    private let links: LinkTable
    private let writer: LinkWriter
    private let peers: PeerTable
    private let dialler: Dialler
    private let keeper: PathKeeper<SessionCore>
    private let invitations: Invitations
    private let trust: TrustKeeper
    private let reporter: PeerReporter
    private let datagrams: DatagramRouter
    private let sockets: SessionSockets
    private let pings: Pings
    private var admission: Admission
    /// Random per start: tells peers that our sequence numbers start over.
    private let incarnation = UInt64.random(in: 1...UInt64.max)
    /// The session's pre-shared key as the handshake uses it (admission `secret`); nil otherwise.
    private let psk: SessionSecret?
    weak var delegate: (any LinkGateDelegate)?

    /// The gate of the session whose parts are `components`.
    init(configuration: SessionConfiguration, logger: Logger, components: SessionComponents) {
        self.configuration = configuration
        self.logger = logger
        (admission, events, links, writer) = (
            components.admission, components.events, components.links, components.writer
        )
        (peers, dialler, keeper, invitations) = (
            components.peers, components.dialler, components.keeper, components.invitations
        )
        (trust, reporter, datagrams) = (components.trust, components.reporter, components.datagrams)
        (sockets, pings) = (components.sockets, components.pings)
        psk = configuration.secret.flatMap { try? SessionSecret(secret: $0, sessionName: configuration.sessionName) }
    }

    /// Handshakes that failed so far (for the security statistics).
    var failedHandshakes: Int { admission.failedHandshakes }

    /// The sealing of a new link in `role`, when the session encrypts.
    func security(for role: LinkStateMachine.Role) -> LinkSecurity? {
        configuration.isEncrypted ? LinkSecurity(role: role, identity: configuration.identity, psk: psk) : nil
    }

    private func perform(_ actions: [LinkStateMachine.Action], on link: Link) {
        delegate?.perform(actions, on: link)
    }

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
        guard delegate?.isRunningNow == true else {
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

    /// The hello for `link`: what it supports, and whether its handshake follows (with the pre-shared key or not).
    private func localHello(for link: Link) -> Hello {
        var capabilities: Capabilities = [.resume, .appMessages, .durableData]
        let datagramChannel = datagrams.channel
        if datagramChannel != nil { capabilities.insert(.datagrams) }
        let port = sockets.port
        var extensions: [HelloExtension] = port > 0 ? [.listenPort(UInt16(port))] : []
        if link.security != nil {
            capabilities.insert(.encryption)
            if psk != nil { capabilities.insert(.preSharedKey) }
            extensions.append(NoiseCipher.helloExtension(offering: configuration.ciphers))
        }
        return Hello(
            peerID: configuration.peerID, incarnation: incarnation, capabilities: capabilities,
            datagramPort: datagramChannel != nil ? UInt16(port) : 0, displayName: configuration.displayName,
            sessionName: configuration.sessionName, extensions: extensions)
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

    /// Closes `link`, ignoring whatever it still delivers; the core's `linkClosed` settles the rest.
    func close(_ link: Link, reason: String) {
        logger.debug("closing link", metadata: ["link": "\(link.remoteDescription)", "reason": "\(reason)"])
        link.step { $0.channelClosed() }
        link.channel.close(promise: nil)
    }

    /// A link's deadlines and heartbeats: a handshake that takes too long, a link gone silent, a heartbeat due.
    func tick(_ link: Link, now: NIODeadline) {
        guard link.machine.isHandshaken else {
            let actions = link.step {
                $0.tick(
                    openFor: now - link.openedAt, proofTimeout: configuration.proofTimeout.timeAmount,
                    handshakeTimeout: configuration.invitationTimeout.timeAmount
                        + configuration.livenessTimeout.timeAmount,
                    strangerTimeout: configuration.strangerTimeout.timeAmount,
                    pairingTimeout: configuration.pairingTimeout.timeAmount)
            }
            return perform(actions, on: link)
        }
        switch link.liveness.check(at: now) {
        case .dead:
            let silence = (now - link.liveness.lastReceived).nanoseconds / 1_000_000
            logger.debug(
                "\(link.hello?.displayName ?? "peer") silent for \(silence) ms; closing its link",
                metadata: ["path": "\(link.path)"])
            close(link, reason: "silent")
        case .heartbeatDue:
            writer.write(.ping(Ping(nonce: 0, timestamp: pings.micros(now))), on: link)
        case .alive:
            break
        }
    }

    // MARK: - Handshake

    /// A hello arrived on `link`: refused (another version or session), dropped (this very peer), or on to the Noise
    /// handshake (or, on insecure links, the invitation).
    func identify(_ hello: Hello, on link: Link) {
        link.identified(by: hello)
        switch admission.check(hello) {
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

    /// A link's Noise handshake failed: counted in the security statistics, told (rate limited), and the link
    /// refused or dropped.
    func handshakeFailed(_ link: Link, _ detail: String, refusal: String?) {
        admission.handshakeFailed()
        authenticationRefused(link, detail)
        let actions = link.step { machine in
            refusal.map { machine.refuse(.authenticationFailed, $0) } ?? machine.drop("handshake failed")
        }
        perform(actions, on: link)
    }

    /// A stranger's handshake failed: logged, and told to the subscribers (the first ten, then every thousandth).
    private func authenticationRefused(_ link: Link, _ detail: String) {
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
