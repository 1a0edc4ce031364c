import ArgumentParser
import Foundation
import SessionControl

/// `peers`: every peer the daemon knows, with its link's state.
struct Peers: RequestCommand {
    static let configuration = CommandConfiguration(abstract: "Lists the peers and the state of their links.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlRequest { ControlRequest(command: "peers") }

    func printText(_ result: [PeerResult], daemon: Daemon) throws(ClientError) {
        guard !result.isEmpty else {
            Output.line("no peers")
            return
        }
        var table = TextTable(
            headers: ["PEER ID", "NAME", "STATE", "TRANSPORT", "ADDRESS", "STANDBY", "PLAYER", "RTT", "UNRELIABLE"],
            rightAligned: [5, 6, 7]
        )
        for peer in result.sorted(by: { ($0.name, $0.peerID) < ($1.name, $1.peerID) }) {
            // The active link's transport and address, and how many other paths stand by.
            let standby = peer.links.filter { $0.state == "standby" }.count
            table.rows.append([
                peer.peerID, peer.name, peer.state, peer.transport, peer.address ?? "-", "\(standby)",
                peer.playerIndex.map(String.init) ?? "-", peer.rttMicros.map(Self.rtt) ?? "-", peer.unreliable,
            ])
        }
        Output.lines(table.render())
    }

    /// A round-trip time for people: microseconds below a millisecond, milliseconds above.
    static func rtt(_ micros: Int) -> String {
        micros < 1000 ? "\(micros) us" : String(format: "%.2f ms", Double(micros) / 1000)
    }
}
