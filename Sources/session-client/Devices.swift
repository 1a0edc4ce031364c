import ArgumentParser
import SessionControl

/// `devices`: the devices this one trusts.
struct Devices: RequestCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists the trusted devices: how each got in, when, and by whom.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlCommand { ControlCommand.devices }

    func printText(_ result: [DeviceResult], daemon: Daemon) throws(ClientError) {
        guard !result.isEmpty else {
            Output.line("no trusted devices; pair with one: session-client pair PEER_ID")
            return
        }
        var table = TextTable(headers: ["PEER ID", "NAME", "FINGERPRINT", "TRUST", "SINCE", "BY"])
        for device in result {
            table.rows.append([
                device.peerID, device.name, device.fingerprint, device.trust, device.since, device.by ?? "-",
            ])
        }
        Output.lines(table.render())
    }
}
