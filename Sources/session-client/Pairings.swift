import ArgumentParser
import SessionControl

/// `pairings`: the pairings under way, with the code each shows.
struct Pairings: ListCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists the pairings under way and the code to compare on both devices.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlCommand { ControlCommand.pairings }

    static let whenEmpty = "no pairings under way"
    static let headers = ["PEER ID", "NAME", "FINGERPRINT", "CODE", "ASKED", "CONFIRMED"]

    static func row(_ pairing: PairingResult) -> [String] {
        let confirmed = [pairing.confirmedHere ? "here" : nil, pairing.confirmedThere ? "there" : nil]
            .compactMap { $0 }.joined(separator: ", ")
        return [
            pairing.peerID, pairing.name, pairing.fingerprint, pairing.code,
            pairing.requestedHere ? "by this device" : "by it", confirmed.isEmpty ? "-" : confirmed,
        ]
    }
}
