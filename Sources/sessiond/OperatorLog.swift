import LanSession
import Logging
import WireCodec

/// What an operator sees of a session in sessiond's log: its events, at info (the library logs at debug and trace).
final class OperatorLog {
    private let logger: Logger
    private var names: [PeerID: String] = [:]

    init(logger: Logger) {
        self.logger = logger
    }

    private func name(_ id: PeerID) -> String {
        names[id].map { "\($0) (\(id))" } ?? "\(id)"
    }

    func record(_ event: SessionEvent) {
        switch event {
        case .peerConnected(let id, let name):
            names[id] = name
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
            logger.warning("\(lost) messages from \(name(id)) were lost (its replay buffer overflowed); state merged")
        case .peerState(let info):
            if !info.name.isEmpty { names[info.peerID] = info.name }
        default:
            break
        }
    }
}
