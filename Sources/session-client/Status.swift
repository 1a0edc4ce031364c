import ArgumentParser
import SessionControl

/// `status`: who the local daemon is, in which session, with how many peers.
struct Status: RequestCommand {
    static let configuration = CommandConfiguration(abstract: "Shows this machine's name, peer id and session.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlCommand { ControlCommand.status }

    func printText(_ result: StatusResult, daemon: Daemon) throws(ClientError) {
        Output.lines(
            TextTable(
                headers: ["name:", result.name],
                rows: [
                    ["peer id:", result.peerID],
                    ["fingerprint:", result.fingerprint],
                    ["admission:", result.admission],
                    ["session:", result.session],
                    ["port:", String(result.port)],
                    ["peers:", "\(result.peers) connected"],
                ]
            ).render()
        )
    }
}
