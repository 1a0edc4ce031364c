import ArgumentParser
import CBluetooth
import Foundation
import LanSession
import LanSessionRFCOMM
import SessionControl
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Runs inside the Bluetooth lab's VM (scripts/btlab): two sessiond, one on each emulated controller, checked over
/// RFCOMM alone and LE L2CAP alone (each against a hostile client), with LAN and RFCOMM side by side (failover both
/// ways); and the latency comparison of LAN and Bluetooth with the same commands.
@main
struct BluetoothLab: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lansession-btlab",
        abstract: "Checks and measurements in the Bluetooth lab (emulated controllers).",
        subcommands: [Check.self, Compare.self])
}

func log(_ text: String) {
    let time = Date().formatted(.iso8601.time(includingFractionalSeconds: true))
    FileHandle.standardError.write(Data("btlab: \(time) \(text)\n".utf8))
    // Also in the kernel's log, beside what the Bluetooth stack says there (the VM's console shows it when it fails).
    if let kmsg = FileHandle(forWritingAtPath: "/dev/kmsg") {
        kmsg.write(Data("<2>btlab: \(text)\n".utf8))
        try? kmsg.close()
    }
}

/// Runs a command to completion; false (and a log line, unless `quiet`) when it cannot start or fails.
@discardableResult
func shell(_ arguments: [String], quiet: Bool = false) -> Bool {
    guard let process = try? HostProcess.local(arguments) else {
        log("cannot start \(arguments.joined(separator: " "))")
        return false
    }
    while process.isRunning { usleep(10_000) }
    let status = process.exitStatus
    if status != 0 && !quiet { log("\(arguments.joined(separator: " ")) exited \(status): \(process.stderr)") }
    return status == 0
}

/// Turns LE advertising (connectable) of hci1 on or off, with BlueZ's btmgmt: the kernel dials an LE peer only while it
/// advertises. hci0 never advertises: these emulated controllers make no LE connection while the initiator does.
func leAdvertising(_ on: Bool) {
    let btmgmt = (ProcessInfo.processInfo.environment["BTLAB_TOOLS"] ?? "") + "/root/usr/bin/btmgmt"
    let settings = on ? ["connectable", "advertising"] : ["advertising", "connectable"]
    for setting in settings { _ = shell([btmgmt, "-i", "hci1", setting, on ? "on" : "off"]) }
}

/// Both controllers as after boot, between groups of LE checks: powered off and on (which ends any LE connection
/// and scan a daemon of the group before left), LE on, no advertising instance left by a daemon that was killed.
func resetControllers() {
    let btmgmt = (ProcessInfo.processInfo.environment["BTLAB_TOOLS"] ?? "") + "/root/usr/bin/btmgmt"
    for hci in ["hci0", "hci1"] {
        shell([btmgmt, "-i", hci, "clr-adv"], quiet: true)  // fails when there is none
        for step in [["advertising", "off"], ["power", "off"], ["le", "on"], ["power", "on"]] {
            shell([btmgmt, "-i", hci] + step)
        }
    }
}

/// Under bluetoothd: each controller forgets the other. bluetoothd keeps a controller that linked to the other (over
/// BR/EDR or LE) as a device, with the UUIDs it learnt; a central's scan filtered by LanSession's UUID then no longer
/// reports the other's LE advertisement.
func forgetEachOther(_ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter) {
    let bluetoothctl = (ProcessInfo.processInfo.environment["BTLAB_TOOLS"] ?? "") + "/root/usr/bin/bluetoothctl"
    for (adapter, other) in [(hci0, hci1), (hci1, hci0)] {
        _ = shell(
            ["/bin/sh", "-c", "printf 'select \(adapter.address)\\nremove \(other.address)\\n' | \(bluetoothctl)"],
            quiet: true)
    }
}

/// The two emulated controllers.
func controllers() throws -> (RFCOMMTransport.Adapter, RFCOMMTransport.Adapter) {
    let adapters = try RFCOMMTransport.adapters()
    guard let zero = adapters.first(where: { $0.name == "hci0" }),
        let one = adapters.first(where: { $0.name == "hci1" })
    else { throw ValidationError("the lab needs hci0 and hci1; found \(adapters.map(\.name))") }
    return (zero, one)
}

/// One check's outcome.
struct Outcome: Encodable {
    var check: String
    var passed: Bool
    var detail: String
}
