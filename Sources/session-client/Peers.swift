import ArgumentParser
import Foundation
import SessionControl

/// `peers`: every peer the daemon knows, with its link's state.
struct Peers: RequestCommand {
    static let configuration = CommandConfiguration(abstract: "Lists the peers and the state of their links.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlCommand { ControlCommand.peers }

    func printText(_ result: [PeerResult], daemon: Daemon) throws(ClientError) {
        guard !result.isEmpty else {
            Output.line("no peers")
            return
        }
        var table = TextTable(
            headers: [
                "PEER ID", "NAME", "STATE", "TRANSPORT", "ADDRESS", "PLAYER", "RTT", "UNRELIABLE", "LINKS", "CIPHER",
                "TRUST", "FINGERPRINT",
            ],
            rightAligned: [5, 6]
        )
        for peer in result.sorted(by: { ($0.name, $0.peerID) < ($1.name, $1.peerID) }) {
            // The active link's transport and address, then every link per transport: "lan active, rfcomm standby".
            let links = peer.links.map { "\($0.transport) \($0.state)" }.joined(separator: ", ")
            table.rows.append([
                peer.peerID, peer.name, peer.state, peer.transport, peer.address ?? "-",
                peer.playerIndex.map(String.init) ?? "-", peer.rttMicros.map(Self.rtt) ?? "-", peer.unreliable,
                links.isEmpty ? "-" : links, peer.cipher ?? "-", peer.trust ?? "-", peer.fingerprint ?? "-",
            ])
        }
        Output.lines(table.render())
    }

    /// A round-trip time for people: microseconds below a millisecond, milliseconds above.
    static func rtt(_ micros: Int) -> String {
        micros < 1000 ? "\(micros) us" : String(format: "%.2f ms", Double(micros) / 1000)
    }
}
