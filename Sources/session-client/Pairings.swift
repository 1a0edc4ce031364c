import ArgumentParser
import SessionControl

/// `pairings`: the pairings under way, with the code each shows.
struct Pairings: RequestCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists the pairings under way and the code to compare on both devices.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlCommand { ControlCommand.pairings }

    func printText(_ result: [PairingResult], daemon: Daemon) throws(ClientError) {
        guard !result.isEmpty else {
            Output.line("no pairings under way")
            return
        }
        var table = TextTable(headers: ["PEER ID", "NAME", "FINGERPRINT", "CODE", "ASKED", "CONFIRMED"])
        for pairing in result {
            let confirmed = [pairing.confirmedHere ? "here" : nil, pairing.confirmedThere ? "there" : nil]
                .compactMap { $0 }.joined(separator: ", ")
            table.rows.append([
                pairing.peerID, pairing.name, pairing.fingerprint, pairing.code,
                pairing.requestedHere ? "by this device" : "by it", confirmed.isEmpty ? "-" : confirmed,
            ])
        }
        Output.lines(table.render())
    }
}
