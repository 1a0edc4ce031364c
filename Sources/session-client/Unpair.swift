import ArgumentParser
import SessionControl

/// `unpair PEER_ID`: removes a device from the whole session, or rejects a pairing with it.
struct Unpair: RequestCommand {
    static let configuration = CommandConfiguration(
        abstract: "Removes a trusted device from the whole session (or rejects a pairing with it).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device's peer id (16 hex digits).")
    var peerID: String

    func validate() throws { try Pair.validate(peerID) }

    func request() -> ControlCommand { .unpair(peer: ControlCommand.peerID(hex: peerID) ?? 0) }

    func printText(_ result: DoneResult, daemon: Daemon) throws(ClientError) {
        Output.line("\(peerID) removed: its links close on every member, and it gets back in only by pairing again")
    }
}
