import AvahiDiscovery
import BubblesAndCounter
import LanSession
import LanSessionDiscovery
import Logging
import Synchronization
import WireCodec

/// What an operator sees of a session in sessiond's log: its events and the apps', at info and above (the libraries
/// log at debug and trace only).
final class OperatorLog: Sendable {
    private let logger: Logger
    private let names = Mutex<[PeerID: String]>([:])

    init(logger: Logger) {
        self.logger = logger
    }

    private func name(_ id: PeerID) -> String {
        names.withLock { $0[id] }.map { "\($0) (\(id))" } ?? "\(id)"
    }

    func record(_ event: DaemonEvent) {
        switch event {
        case .session(let event): record(event)
        case .app(.countClaimedAbove(let peer, let claimed, let local)):
            logger.warning(
                "\(name(peer)) holds a count of \(claimed) for this peer, which counted \(local): this peer's count was lost (its state directory restored?); ignored"
            )
        case .app: break
        }
    }

    private func record(_ event: SessionEvent) {
        switch event {
        case .peerConnected(let id, let name):
            names.withLock { $0[id] = name }
            logger.info("connected to \(self.name(id))")
        case .peerLost(let id):
            logger.info("lost \(name(id)): no link left; redialling")
        case .peerLeft(let id, let reason):
            logger.info("\(name(id)) left (\(reason))")
        case .linkChanged(let id, let link):
            logger.info("\(name(id)): \(link.transport) link \(link.address) \(link.state.rawValue)")
        case .declined(let id, let address, let reason):
            logger.notice("\(id.map(name) ?? address) declined or was refused: \(reason)")
        case .invitation(let request):
            logger.notice("\(request.displayName) (\(request.peerID)) asks to join: invitation \(request.id)")
        case .resynchronised(let id, let lost):
            logger.warning("\(lost) messages from \(name(id)) were lost (it dropped them unsent); state merged")
        case .unacknowledged(let id, let messages):
            logger.warning(
                "\(name(id)) restarted before acknowledging \(messages) data messages: they may not have reached it")
        case .peerState(let info):
            if !info.name.isEmpty { names.withLock { $0[info.peerID] = info.name } }
        case .notice(let notice):
            switch notice {
            case .authenticationFailed, .datagramsFallBack, .notPaired:
                logger.notice("\(notice)")
            case .linkRejected, .unprovenLinkRefused, .descriptorsExhausted, .datagramsUnavailable,
                .replayBufferOverflowed, .trustNotSaved:
                logger.warning("\(notice)")
            }
        case .pairingRequested(let request):
            logger.notice(
                "pairing \(request.requestedHere ? "asked of" : "asked by") \(request.displayName) (\(request.peerID), \(request.fingerprint)): code \(request.code); confirm with: session-client pair \(request.peerID) --confirm \(request.code)"
            )
        case .paired(let device):
            logger.notice("paired with \(device.name) (\(device.peerID), \(device.fingerprint))")
        case .pairingEnded(let id, let reason):
            logger.notice("pairing with \(name(id)) not made: \(reason)")
        case .introduced(let device):
            logger.info(
                "\(device.name) (\(device.peerID)) admitted on \(device.introducedBy.map(name) ?? "a member")'s introduction"
            )
        case .unpaired(let id, let by):
            logger.notice("\(name(id)) removed from the session by \(name(by))")
        default:
            break
        }
    }

    /// What avahi-daemon's connection reports.
    func record(_ notice: AvahiNotice) {
        switch notice {
        case .failed: logger.error("\(notice)")
        case .serviceRenamed, .registeringAgain: logger.notice("\(notice)")
        default: logger.warning("\(notice)")
        }
    }

    /// What the discovery reports.
    func record(_ notice: DiscoveryNotice) {
        logger.warning("\(notice)")
    }

    /// What the LE discovery reports.
    func record(leDiscovery text: String) {
        logger.warning("\(text)")
    }
}
