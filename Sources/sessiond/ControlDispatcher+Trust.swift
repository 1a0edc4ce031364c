import Foundation
import LanSession
import SessionControl
import WireCodec

/// Pairing and the trusted devices on the control socket.
extension ControlDispatcher {
    /// `pairings`: the pairings under way.
    func pairings() async throws -> [PairingResult] {
        try await session.pairings().map(Self.result)
    }

    /// `devices`: the trusted devices.
    func devices() async throws -> [DeviceResult] {
        let formatter = ISO8601DateFormatter()
        return try await session.trustedDevices().map {
            DeviceResult(
                peerID: $0.peerID.description, name: $0.name, fingerprint: $0.fingerprint,
                trust: $0.trust.rawValue, since: formatter.string(from: $0.since),
                by: $0.introducedBy?.description, version: $0.version)
        }
    }

    /// `pair`: asks the device to pair, or confirms the pairing with `code`.
    func pair(_ peer: PeerID, code: String?) async throws -> PairResult {
        if let code {
            try await session.confirmPairing(with: peer, code: code)
            let pending = try await session.pairings().first { $0.peerID == peer }
            return PairResult(pairing: pending.map(Self.result), confirmed: true, paired: pending == nil)
        }
        let pairing = try await session.requestPairing(with: peer)
        return PairResult(pairing: pairing.map(Self.result))
    }

    static func result(_ request: PairingRequest) -> PairingResult {
        PairingResult(
            peerID: request.peerID.description, name: request.displayName, fingerprint: request.fingerprint,
            code: request.code, requestedHere: request.requestedHere, confirmedHere: request.confirmedHere,
            confirmedThere: request.confirmedThere)
    }
}
