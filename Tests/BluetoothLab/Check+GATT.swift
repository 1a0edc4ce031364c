import Foundation
import LanSession
import LanSessionRFCOMM
import SessionControl
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

extension Check {
    /// The GATT face, from a client that is not ours: BlueZ's `gatttool` on hci0 against a daemon on hci1 (LE, its
    /// own advertising). It finds LanSession's service, reads the identity, writes a pick-up, a move and an increment
    /// (as framed commands of the codec, write without response), gets refused a write that is no command, and
    /// receives notifications of moves and counts the daemon's user makes.
    func gattFace(_ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter) async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        let daemon = try Daemon(
            "gatt", ["--transport", "le", "--bt-adapter", "hci1", "--le-psm", "\(0x95)"], discovery: true)
        defer { daemon.stop() }
        guard await waitUntil(.seconds(30), every: .milliseconds(100), { daemon.peerID != nil }),
            let id = daemon.peerID
        else {
            return [Outcome(check: "GATT face: the daemon", passed: false, detail: "sessiond did not start")]
        }
        // One connection, as a phone keeps it: gatttool's interactive mode, fed a line at a time. Reconnecting for
        // each step made the VM's kernel (6.1) corrupt its list of LE channels once a server's ATT socket closed.
        let tools = ProcessInfo.processInfo.environment["BTLAB_TOOLS"] ?? ""
        let steps = [
            ("connect", 3), ("primary", 1), ("char-read-hnd 0x0008", 1),
            // Pick bubble 0 up, move it to (100.5, -20.25), increment 5 times (write without response); a write that
            // is no command (write request); subscribe.
            ("char-write-cmd 0x000a 022400", 1), ("char-write-cmd 0x000a 0c25000000c9420000a2c10100", 1),
            ("char-write-cmd 0x000a 022705", 1), ("char-write-req 0x000a ffff", 1), ("char-write-req 0x000d 0100", 8),
            ("disconnect", 1), ("quit", 0),
        ]
        let feed = steps.map { "echo '\($0.0)'; sleep \($0.1)" }.joined(separator: "; ")
        let client = try HostProcess.local([
            "/bin/sh", "-c",
            "(\(feed)) | timeout 40 \(tools)/root/usr/bin/gatttool -I -i hci0 -b \(hci1.address) -t public >&2 2>&1",
        ])
        let moved = await daemon.heldAtTheCentralsMove(by: id)
        func local() -> UInt64? { daemon.localCount }
        let counted = await waitUntil(.seconds(10), every: .milliseconds(100)) { local() == 5 }
        outcomes.append(
            Outcome(
                check: "GATT face: a central's pick-up, move and increment act as the device's user",
                passed: moved && counted,
                detail:
                    "bubble 0 held and at (100.5, -20.25) \(moved); count 5 \(counted) (at \(local().map(String.init) ?? "?"))"
            ))
        // Notifications: once subscribed, the daemon's user increments twice and moves bubble 0.
        try? await Task.sleep(for: .seconds(3))
        let control = try daemon.client()
        for _ in 0..<2 {
            _ = try control.call(ControlCommand.increment(count: 1), as: IncrementResult.self)
        }
        _ = try control.call(ControlCommand.move(view: 0, x: 1, y: 2), as: DoneResult.self)
        let stillServing = daemon.call(ControlCommand.status, as: StatusResult.self) != nil
        _ = await waitUntil(.seconds(45), every: .milliseconds(100)) { !client.isRunning }
        let output = client.stderr.replacingOccurrences(of: "\u{1B}", with: "")
        let lines = output.split(separator: "\n")
        let hasService = output.lowercased().contains("uuid: 4c414e53-4553-5349-4f4e-0000000000a0")
        let identity = lines.first { $0.contains("value/descriptor:") }.map { line in
            String(
                decoding: line.split(separator: ":").last!.split(separator: " ").compactMap { UInt8($0, radix: 16) },
                as: UTF8.self)
        }
        outcomes.insert(
            Outcome(
                check: "GATT face: service found, identity read by gatttool",
                passed: hasService && identity?.hasPrefix("peer \(id) \"gatt\" session \"lab\" fingerprint ") == true,
                detail: "service listed \(hasService); identity \(identity ?? "none: \(output.suffix(300))")"),
            at: 0)
        let refused = lines.contains { $0.contains("0x80") || $0.lowercased().contains("write request failed") }
        let notifications = lines.filter { $0.contains("Notification handle = 0x000c") }
        // counterState of the daemon's entry at 7: 0b 28 01 <id, u64le> 07; move of bubble 0 to (1, 2).
        let idBytes = withUnsafeBytes(of: UInt64(id, radix: 16)!.littleEndian) { Array($0) }
        let countHex = ([0x0B, 0x28, 0x01] + idBytes + [0x07]).map { String(format: "%02x", $0) }.joined(separator: " ")
        let sawCount = notifications.contains { $0.contains(countHex) }
        let sawMove = notifications.contains { $0.contains("0c 25 00 00 00 80 3f 00 00 00 40") }
        outcomes.append(
            Outcome(
                check: "GATT face: notifications of counts and moves; a write that is no command refused",
                passed: sawCount && sawMove && refused && stillServing,
                detail:
                    "\(notifications.count) notifications, count 7 \(sawCount), move \(sawMove); refused \(refused), still serving \(stillServing)"
                    + (sawCount && sawMove && refused ? "" : "; gatttool: \(output.suffix(600))")))
        return outcomes
    }
}
