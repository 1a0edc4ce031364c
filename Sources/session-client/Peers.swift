import ArgumentParser
import Foundation
import SessionControl

/// `peers`: every peer the daemon knows, with its link's state.
struct Peers: ListCommand {
    static let configuration = CommandConfiguration(abstract: "Lists the peers and the state of their links.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlCommand { ControlCommand.peers }

    static let whenEmpty = "no peers"
    static let headers = [
        "PEER ID", "NAME", "STATE", "TRANSPORT", "ADDRESS", "PLAYER", "RTT", "UNRELIABLE", "LINKS", "CIPHER", "TRUST",
        "FINGERPRINT",
    ]
    static let rightAligned: Set<Int> = [5, 6]

    static func sorted(_ peers: [PeerResult]) -> [PeerResult] {
        peers.sorted { ($0.name, $0.peerID) < ($1.name, $1.peerID) }
    }

    /// A peer's row; its links each with their transport and state, the active one first: "lan active, rfcomm
    /// standby".
    static func row(_ peer: PeerResult) -> [String] {
        let links = peer.links.map { "\($0.transport) \($0.state)" }.joined(separator: ", ")
        return [
            peer.peerID, peer.name, peer.state, peer.transport, peer.address ?? "-",
            peer.playerIndex.map(String.init) ?? "-", peer.rttMicros.map(rtt) ?? "-", peer.unreliable,
            links.isEmpty ? "-" : links, peer.cipher ?? "-", peer.trust ?? "-", peer.fingerprint ?? "-",
        ]
    }

    /// A round-trip time for people: microseconds below a millisecond, milliseconds above.
    static func rtt(_ micros: Int) -> String {
        micros < 1000 ? "\(micros) us" : String(format: "%.2f ms", Double(micros) / 1000)
    }
}
