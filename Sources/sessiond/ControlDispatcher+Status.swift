@_spi(Diagnostics) import LanSession
import SessionControl

extension ControlDispatcher {
    /// The `status` reply: who this device is, its session, its peers, its security and its Bluetooth.
    func status() async throws -> StatusResult {
        let peers = try await session.peers()
        let security = try await session.security()
        return StatusResult(
            name: session.configuration.displayName, peerID: session.peerID.description,
            session: session.configuration.sessionName, port: await session.port,
            peers: peers.filter { $0.state == .connected }.count, encrypted: security.encrypted,
            fingerprint: session.fingerprint,
            admission: session.configuration.isInsecure
                ? "open (insecure: not encrypted, for measuring only)"
                : session.configuration.admission.description,
            failedHandshakes: security.failedHandshakes, droppedDatagrams: security.droppedDatagrams,
            refusedConnections: security.refusedConnections,
            gattFace: bluetooth.gattFace.withLock { $0?.rawValue })
    }
}
