import ArgumentParser
import Foundation
import LanSessionRFCOMM
import SessionControl
import TestSupport

extension Compare {
    /// The rows under bluetoothd: the LE transport's round trip between two daemons (a on hci0 dials b on hci1), then
    /// the GATT face's, as a phone app would see it: bleak on hci0 writes one increment without response to a daemon on
    /// hci1 and waits for the `counterState` notification it causes, through bluetoothd on both sides.
    func bluezRows(_ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter) async throws -> [Row] {
        var rows: [Row] = []
        do {
            leAdvertising(true)
            defer { leAdvertising(false) }
            let (a, b) = try Daemon.pair("ga", "gb", transport: "le", ports: (0x96, 0x97), listenerAdapter: hci1)
            defer {
                a.stop()
                b.stop()
            }
            guard
                await waitUntil(.seconds(30), every: .milliseconds(100), { a.connected == 1 && b.connected == 1 }),
                let idB = b.peerID
            else { throw ValidationError("the LE daemons did not link under bluetoothd") }
            guard
                let result = a.call(
                    .bench(ControlCommand.Bench(peer: idB, transport: "le", count: count, size: 16)),
                    as: BenchResult.self)
            else { throw ValidationError("bench over le failed") }
            rows.append(
                Row(
                    row: "LE transport (sessiond)", p50_us: result.p50_us, p90_us: result.p90_us,
                    p99_us: result.p99_us, note: "16-byte messages, bluetoothd running"))
        }
        resetControllers()
        forgetEachOther(hci0, hci1)
        let daemon = try Daemon(
            "gatt", ["--transport", "le", "--bt-adapter", "hci1", "--le-psm", "\(0x95)"], discovery: true)
        defer { daemon.stop() }
        guard
            await waitUntil(
                .seconds(15), every: .milliseconds(100),
                { daemon.call(ControlCommand.status, as: StatusResult.self)?.gattFace == "bluetoothd" })
        else { throw ValidationError("the daemon's GATT face is not served by bluetoothd") }
        let environment = ProcessInfo.processInfo.environment
        let tools = (environment["BTLAB_TOOLS"] ?? "") + "/root/usr/bin"
        let trips = min(count, 300)
        let central = try HostProcess.local([
            "/usr/bin/env", "PATH=\(tools):" + (environment["PATH"] ?? "/usr/bin:/bin"), "/usr/bin/python3",
            FileManager.default.currentDirectoryPath + "/Tests/BluetoothLab/gatt_central.py", "hci0", hci1.address,
            "30", "--listen", "0", "--round-trips", "\(trips)",
        ])
        defer { central.stop() }
        guard
            let timed = await central.waitFor(
                timeout: 60 + Double(trips) * 0.2, { $0["gatt_round_trip"] != nil || $0["error"] != nil }),
            let result = timed["gatt_round_trip"] as? [String: Any], (result["count"] as? NSNumber)?.intValue == trips
        else { throw ValidationError("the GATT round trips failed: \(central.events.suffix(3))") }
        func value(_ key: String) -> Double { (result[key] as? NSNumber)?.doubleValue ?? .nan }
        rows.append(
            Row(
                row: "GATT face (bleak, bluetoothd)", p50_us: value("p50_us"), p90_us: value("p90_us"),
                p99_us: value("p99_us"),
                note: "\(trips) trips: a write without response, then the notification it causes"))
        return rows
    }
}
