import ArgumentParser
import SessionControl

/// `devices`: the devices this one trusts.
struct Devices: ListCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists the trusted devices: how each got in, when, and by whom.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlCommand { ControlCommand.devices }

    static let whenEmpty = "no trusted devices; pair with one: session-client pair PEER_ID"
    static let headers = ["PEER ID", "NAME", "FINGERPRINT", "TRUST", "SINCE", "BY"]

    static func row(_ device: DeviceResult) -> [String] {
        [device.peerID, device.name, device.fingerprint, device.trust, device.since, device.by ?? "-"]
    }
}
