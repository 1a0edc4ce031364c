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
struct Compare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Round trips of 16-byte messages: raw TCP, raw RFCOMM and raw LE L2CAP, then the LAN, RFCOMM and LE "
            + "transports of sessiond; RFCOMM again during a push over it.")

    @Option(help: "Round trips per row.") var count = 1_000
    @Flag(help: "One JSON object per row.") var json = false
    @Flag(help: "The rows under bluetoothd (a boot with --bluetoothd): GATT through bleak beside the LE transport.")
    var bluez = false

    func run() async throws {
        let (hci0, hci1) = try controllers()
        if bluez { return try print(try await bluezRows(hci0, hci1), title: "under bluetoothd", floors: [1: 0]) }
        // The push first, before hci1 advertises on LE for the LE rows (see leAdvertising).
        let duringPush = try await pingDuringPush(hci0, hci1)
        leAdvertising(true)
        defer { leAdvertising(false) }
        var rows: [Row] = []
        rows.append(percentiles("raw TCP ping-pong (loopback)", RawPingPong.tcp(count: count)))
        rows.append(
            percentiles(
                "raw RFCOMM ping-pong",
                RawPingPong.rfcomm(count: count, from: hci1.address, to: hci0.address, channel: 9)))
        rows.append(
            percentiles(
                "raw LE L2CAP ping-pong", RawPingPong.le(count: count, from: hci0.address, to: hci1.address, psm: 0x93))
        )
        // a on hci0 dials b on hci1 over all three; hci1 advertises on LE.
        let a = try Daemon(
            "ca",
            [
                "--transport", "all", "--port", "47011", "--peer", "127.0.0.1:47012", "--bt-adapter", "hci0",
                "--bt-channel", "11", "--bt-peer", "\(hci1.address)/12", "--le-psm", "\(0x95)", "--le-peer",
                "\(hci1.address)/\(0x94)",
            ])
        let b = try Daemon(
            "cb",
            [
                "--transport", "all", "--port", "47012", "--bt-adapter", "hci1", "--bt-channel", "12", "--le-psm",
                "\(0x94)",
            ])
        defer {
            a.stop()
            b.stop()
        }
        guard
            await waitUntil(
                .seconds(60), every: .milliseconds(100),
                {
                    guard let id = b.peerID else { return false }
                    return Set(a.links(to: id).map(\.transport)) == ["lan", "rfcomm", "le"]
                        && a.links(to: id).allSatisfy { $0.state != "connecting" }
                }), let idB = b.peerID
        else { throw ValidationError("the daemons did not link on all three transports") }
        let names = [
            "lan": "LAN transport (sessiond)", "rfcomm": "RFCOMM transport (sessiond)", "le": "LE transport (sessiond)",
        ]
        for transport in ["lan", "rfcomm", "le"] {
            let result = a.call(
                .bench(ControlCommand.Bench(peer: idB, transport: transport, count: count, size: 16)),
                as: BenchResult.self)
            guard let result else { throw ValidationError("bench over \(transport) failed") }
            rows.append(
                Row(
                    row: names[transport]!,
                    p50_us: result.p50_us, p90_us: result.p90_us, p99_us: result.p99_us))
        }
        a.stop()
        b.stop()
        rows.append(duringPush)
        try print(rows, title: "", floors: [3: 0, 4: 1, 5: 2, 6: 4])
    }

    /// The rows, as JSON lines or as a table; `floors` maps a row to the row its p50 is compared with.
    func print(_ rows: [Row], title: String, floors: [Int: Int]) throws {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            for row in rows { Swift.print(String(decoding: try encoder.encode(row), as: UTF8.self)) }
            return
        }
        Swift.print(
            "emulated controllers (btvirt in a QEMU VM)\(title.isEmpty ? "" : ", \(title)"): round trips, "
                + "\(count) per row unless said")
        Swift.print("row                               p50 us    p90 us    p99 us   p50 vs floor")
        for (index, row) in rows.enumerated() {
            let floor = floors[index].map { rows[$0].p50_us } ?? row.p50_us
            let ratio = String(format: "%.2fx", row.p50_us / floor)
            Swift.print(
                row.row.padding(toLength: 32, withPad: " ", startingAt: 0)
                    + String(format: "%9.1f %9.1f %9.1f   ", row.p50_us, row.p90_us, row.p99_us) + ratio
                    + (row.note.map { "  (\($0))" } ?? ""))
        }
    }
}

extension Compare {
    /// Round trips over an RFCOMM-only pair of daemons while a 2 MiB file goes the same way (30 of them, from 0.3 s
    /// into the push): how long a transfer makes a small message wait on the slowest path, beside the same path idle.
    func pingDuringPush(_ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter) async throws -> Row {
        let (sender, receiver) = try Daemon.pair(
            "cc", "cd", transport: "rfcomm", ports: (13, 14), listenerAdapter: hci1)
        defer {
            sender.stop()
            receiver.stop()
        }
        guard
            await waitUntil(
                .seconds(30), every: .milliseconds(100), { sender.connected == 1 && receiver.connected == 1 }),
            let peer = receiver.peerID
        else { throw ValidationError("the rfcomm-only daemons did not link") }
        let size = 2 << 20
        let file = sender.directory + "/push.bin"
        guard
            FileManager.default.createFile(
                atPath: file, contents: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        else { throw ValidationError("cannot write \(file)") }
        let client = try sender.client()
        try client.send(ControlCommand.push(path: file, peer: peer, name: "push.bin"))
        try? await Task.sleep(for: .milliseconds(300))  // the transfer under way
        let result = sender.call(
            ControlCommand.bench(ControlCommand.Bench(peer: peer, transport: "rfcomm", count: 30, size: 16)),
            as: BenchResult.self)
        var transfer: TransferResult?
        while let line = try? client.readLine(),
            let reply = try? JSONDecoder().decode(ControlReply<TransferResult>.self, from: line), reply.ok,
            let progress = reply.result
        {
            transfer = progress
            if ["finished", "failed", "cancelled"].contains(progress.phase) { break }
        }
        guard let result, let transfer, transfer.phase == "finished", let rate = transfer.megabytesPerSecond else {
            throw ValidationError("the push or the round trips during it failed")
        }
        return Row(
            row: "RFCOMM (sessiond) during a push", p50_us: result.p50_us, p90_us: result.p90_us,
            p99_us: result.p99_us, note: String(format: "2 MiB pushed at %.0f KB/s", rate * 1_000))
    }
}
