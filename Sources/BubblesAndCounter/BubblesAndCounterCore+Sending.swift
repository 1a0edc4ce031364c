import LanSession
import WireCodec

/// The apps' messages out, through the session's ``ApplicationContext``: encoded here, carried by the session as
/// application messages (``Message/application(_:)``), for which the context throws no error (it throws only for the
/// session's own kinds).
extension BubblesAndCounterCore {
    /// Sends `message` reliably to `peer`.
    func send(_ message: BubblesAndCounterMessage, to peer: PeerID) {
        guard let message = encoded(message) else { return }
        try? context.sendReliably(message, to: peer)
    }

    /// Sends `message` reliably to every member.
    func sendToMembers(_ message: BubblesAndCounterMessage) {
        guard let message = encoded(message) else { return }
        try? context.sendReliablyToMembers(message)
    }

    /// Sends `message` to every connected peer, reliably or not.
    func sendToConnectedPeers(_ message: BubblesAndCounterMessage, reliably: Bool) {
        guard let message = encoded(message) else { return }
        try? context.sendToConnectedPeers(message, reliably: reliably)
    }

    /// `message` as the session carries it; nil (logged) for one the codec refuses, which the apps never make.
    func encoded(_ message: BubblesAndCounterMessage) -> Message? {
        do {
            return try message.message()
        } catch {
            context.logger.debug("cannot encode \(message.kind): \(error)")
            return nil
        }
    }
}
