import NIOCore
import WireCodec

/// What a link's handler tells the core: its opening and failures go to the ``LinkGate``, the rest the core routes.
extension SessionCore: LinkEvents {
    func linkOpened(
        channel: any Channel, role: LinkStateMachine.Role, transport: any Transport, endpoint: Endpoint?,
        intendedPeer: PeerID?, security: LinkSecurity?
    ) -> Link {
        gate.linkOpened(
            channel: channel, role: role, transport: transport, endpoint: endpoint, intendedPeer: intendedPeer,
            security: security)
    }

    func linkFailed(_ link: Link, error: any Error) {
        gate.linkFailed(link, error: error)
    }
}
