import Foundation
import LanSession
import SessionControl
import WireCodec

/// Pairing and the trusted devices on the control socket.
extension ControlDispatcher {
    func trust(_ request: ControlRequest) async throws -> Data {
        switch request.command {
        case "pairings":
            return Self.reply(try await session.pairings().map(Self.result))
        case "devices":
            let formatter = ISO8601DateFormatter()
            return Self.reply(
                try await session.trustedDevices().map {
                    DeviceResult(
                        peerID: $0.peerID.description, name: $0.name, fingerprint: $0.fingerprint,
                        trust: $0.trust.rawValue, since: formatter.string(from: $0.since),
                        by: $0.introducedBy?.description, version: $0.version)
                })
        case "pair":
            let peer = try peerID(request)
            if let code = request.code {
                try await session.confirmPairing(with: peer, code: code)
                let pending = try await session.pairings().first { $0.peerID == peer }
                return Self.reply(
                    PairResult(pairing: pending.map(Self.result), confirmed: true, paired: pending == nil))
            }
            let pairing = try await session.requestPairing(with: peer)
            return Self.reply(PairResult(pairing: pairing.map(Self.result)))
        default:  // unpair
            try await session.unpair(try peerID(request))
            return Self.reply(DoneResult())
        }
    }

    private func peerID(_ request: ControlRequest) throws -> PeerID {
        guard let text = request.peer, let peer = PeerID(hex: text.lowercased()) else {
            throw SessionError(
                .invalidArgument, "\(request.command) needs a peer id (16 hex digits), got \(request.peer ?? "none")")
        }
        return peer
    }

    static func result(_ request: PairingRequest) -> PairingResult {
        PairingResult(
            peerID: request.peerID.description, name: request.displayName, fingerprint: request.fingerprint,
            code: request.code, requestedHere: request.requestedHere, confirmedHere: request.confirmedHere,
            confirmedThere: request.confirmedThere)
    }
}
