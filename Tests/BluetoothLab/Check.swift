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
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The lab tests; exits 1 if any fails.")

    @Flag(help: "Only the checks over LE L2CAP (scripts/btlab runs them in a boot of their own).") var le = false
    @Option(
        help:
            "With --le, one group of checks only: alone, discovery, gatt or failover; with --bluez: rfcomm, gatt or failover."
    )
    var only: String?
    @Flag(help: "Only the checks under BlueZ's bluetoothd, bleak the central (a boot of their own: --bluetoothd).")
    var bluez = false

    func run() async throws {
        let (hci0, hci1) = try controllers()
        log("controllers: hci0 \(hci0.address), hci1 \(hci1.address)")
        var outcomes: [Outcome] = []
        if bluez {
            // RFCOMM first: the VM's kernel (6.1) once corrupted its list of links when RFCOMM sessions closed after
            // LE links between the same two controllers.
            if only == nil || only == "rfcomm" { outcomes += try await bluezRFCOMM(hci0, hci1) }
            if only == nil || only == "gatt" { outcomes += try await bluezFace(hci0, hci1) }
            if only == nil || only == "discovery" {
                resetControllers()
                forgetEachOther(hci0, hci1)
                outcomes += try await leDiscovery(hci0, hci1)
            }
            if only == nil || only == "failover" { outcomes += try await failover(.le, hci0, hci1) }
        } else if le {
            // Each group on controllers as after boot: what one group's daemons leave behind is not the next's.
            if only == nil || only == "alone" { outcomes += try await alone(.le, hci0, hci1) }
            if only == nil || only == "discovery" {
                resetControllers()
                outcomes += try await leDiscovery(hci0, hci1)
            }
            if only == nil || only == "gatt" {
                resetControllers()
                outcomes += try await gattFace(hci0, hci1)
            }
            if only == nil || only == "failover" {
                resetControllers()
                outcomes += try await failover(.le, hci0, hci1)
            }
        } else {
            outcomes += try await alone(.rfcomm, hci0, hci1)
            outcomes += try await pairingOverRFCOMM(hci0, hci1)
            outcomes += try await failover(.rfcomm, hci0, hci1)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for outcome in outcomes {
            print(String(decoding: try encoder.encode(outcome), as: UTF8.self))
        }
        let failed = outcomes.filter { !$0.passed }
        log(failed.isEmpty ? "all \(outcomes.count) checks passed" : "\(failed.count) of \(outcomes.count) failed")
        if !failed.isEmpty { throw ExitCode(1) }
    }

    /// A Bluetooth transport checked alone.
    enum Alone: String {
        case rfcomm
        case le
    }

    /// Two daemons with only `transport` (`a` on hci0 dials `b` on hci1): handshake, 1,000 increments exactly once,
    /// bubble moves, garbage from another client on b's channel or PSM, a bye.
    func alone(
        _ transport: Alone, _ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter
    ) async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        let name = transport.rawValue
        if transport == .le { leAdvertising(true) }
        defer { if transport == .le { leAdvertising(false) } }
        let (a, b) = try Daemon.pair(
            transport == .rfcomm ? "a" : "la", transport == .rfcomm ? "b" : "lb", transport: name,
            ports: transport == .rfcomm ? (3, 4) : (0x91, 0x92), listenerAdapter: hci1)
        defer {
            a.stop()
            b.stop()
        }
        let started = ContinuousClock.now
        let linked = await waitUntil(.seconds(30), every: .milliseconds(100)) { a.connected == 1 && b.connected == 1 }
        let linkedAfter = ContinuousClock.now - started
        guard linked, let idA = a.peerID, let idB = b.peerID else {
            return [Outcome(check: "\(name) handshake", passed: false, detail: "not connected after \(linkedAfter)")]
        }
        let alone = a.links(to: idB).map(\.transport) == [name]
        outcomes.append(
            Outcome(
                check: "\(name) handshake", passed: alone,
                detail: "connected \(linkedAfter) after the start; links \(a.links(to: idB).map(\.transport))"))

        // Increments, one by one: 1,000 over RFCOMM; 200 over LE, whose discovery check makes 1,000 more.
        let increments: UInt64 = transport == .rfcomm ? 1_000 : 200
        let control = try a.client()
        let counting = ContinuousClock.now
        for _ in 0..<increments {
            _ = try control.call(ControlCommand.increment(count: 1), as: IncrementResult.self)
        }
        let arrived = await waitUntil(.seconds(30), every: .milliseconds(100)) { b.count(of: idA) == increments }
        try? await Task.sleep(for: .seconds(1))
        let final = b.count(of: idA)
        outcomes.append(
            Outcome(
                check: "\(increments.formatted()) increments over \(name) exactly once",
                passed: arrived && final == increments,
                detail: "b counts a at \(final.map(String.init) ?? "?") after \(ContinuousClock.now - counting)"))

        // Bubbles: a picks bubble 2 up, moves it, drops it; b sees the holder, the moves and the drop.
        _ = try control.call(ControlCommand.pickUp(view: 2), as: DoneResult.self)
        let held = await waitUntil(.seconds(10), every: .milliseconds(100)) {
            b.call(ControlCommand.bubbles, as: [BubbleResult].self)?.first { $0.view == 2 }?.holder == idA
        }
        for step in 1...5 {
            _ = try control.call(
                ControlCommand.move(view: 2, x: Double(10 * step), y: Double(20 * step)),
                as: DoneResult.self)
        }
        let moved = await waitUntil(.seconds(10), every: .milliseconds(100)) {
            let bubble = b.call(ControlCommand.bubbles, as: [BubbleResult].self)?.first { $0.view == 2 }
            return bubble?.x == 50 && bubble?.y == 100
        }
        _ = try control.call(ControlCommand.drop(view: 2), as: DoneResult.self)
        let dropped = await waitUntil(.seconds(10), every: .milliseconds(100)) {
            b.call(ControlCommand.bubbles, as: [BubbleResult].self)?.first { $0.view == 2 }?.holder == nil
        }
        outcomes.append(
            Outcome(
                check: "bubble moves over \(name)", passed: held && moved && dropped,
                detail: "held \(held), moved \(moved), dropped \(dropped)"))

        // A hostile client on a's channel (RFCOMM) or b's PSM (LE, where hci1 advertises): garbage, dropped with a
        // logged reason; the daemon carries on.
        let (target, other) = transport == .rfcomm ? (a, idB) : (b, idA)
        outcomes.append(await hostileClient(transport, target, linkedTo: other, hci0: hci0, hci1: hci1))

        // Bye: b stops; a sees it leave.
        let watch = try a.watch()
        kill(b.process.pid, SIGTERM)
        let left = await waitUntil(.seconds(10), every: .milliseconds(100)) {
            watch.events.contains { $0.event.left(idB) }
        }
        a.stop()
        b.stop()
        // What a logged of b going, for a failure's detail.
        let seen = a.process.stderr.split(separator: "\n").filter { $0.contains("left") || $0.contains("\(idB)") }
        outcomes.append(
            Outcome(
                check: "bye over \(name)", passed: left,
                detail: "peerLeft seen: \(left)" + (left ? "" : "; a's log: \(seen.suffix(4).joined(separator: " | "))")
            ))
        let reason = target.process.stderr.split(separator: "\n").first { $0.contains("malformed frame") }
        outcomes.append(
            Outcome(
                check: "the garbage \(name) client's link closed with a logged reason", passed: reason != nil,
                detail: reason.map(String.init) ?? "no log line"))
        return outcomes
    }

    /// Two daemons in admission `paired` over RFCOMM only: strangers at first, the same code on both, confirmed on
    /// both, then members that count; the Noise handshake and sealing as on the LAN.
    func pairingOverRFCOMM(
        _ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter
    ) async throws -> [Outcome] {
        let a = try Daemon(
            "pa",
            ["--transport", "rfcomm", "--bt-adapter", "hci0", "--bt-channel", "7", "--bt-peer", "\(hci1.address)/8"],
            admission: "paired")
        let b = try Daemon(
            "pb", ["--transport", "rfcomm", "--bt-adapter", "hci1", "--bt-channel", "8"], admission: "paired")
        defer {
            a.stop()
            b.stop()
        }
        _ = await waitUntil(.seconds(60), every: .milliseconds(100)) { a.peerID != nil && b.peerID != nil }
        guard let idA = a.peerID, let idB = b.peerID else {
            a.stop()
            b.stop()
            let logs = [a, b].map { "\($0.name) exit \($0.process.exitStatus): \($0.process.stderr.suffix(400))" }
            return [
                Outcome(
                    check: "pairing over rfcomm", passed: false,
                    detail: "the daemons did not start: \(logs.joined(separator: " | "))")
            ]
        }
        let started = ContinuousClock.now
        var asked: PairResult?
        _ = await waitUntil(.seconds(30), every: .milliseconds(200)) {
            asked = a.call(ControlCommand.pair(peer: ControlCommand.peerID(hex: idB) ?? 0), as: PairResult.self)
            return asked?.pairing != nil
        }
        var shown: PairingResult?
        _ = await waitUntil(.seconds(10), every: .milliseconds(100)) {
            shown = b.call(ControlCommand.pairings, as: [PairingResult].self)?.first
            return shown != nil
        }
        let code = asked?.pairing?.code
        let same = code != nil && code == shown?.code
        if let code, same {
            _ = b.call(ControlCommand.pair(peer: ControlCommand.peerID(hex: idA) ?? 0, code: code), as: PairResult.self)
            _ = a.call(ControlCommand.pair(peer: ControlCommand.peerID(hex: idB) ?? 0, code: code), as: PairResult.self)
        }
        let linked = await waitUntil(.seconds(30), every: .milliseconds(100)) { a.connected == 1 && b.connected == 1 }
        let pairedAfter = ContinuousClock.now - started
        let peer = a.peers.first { $0.peerID == idB }
        _ = a.call(ControlCommand.increment(count: 10), as: IncrementResult.self)
        let counted = await waitUntil(.seconds(10), every: .milliseconds(100)) { b.count(of: idA) == 10 }
        return [
            Outcome(
                check: "pairing over rfcomm", passed: same && linked && peer?.trust == "paired" && counted,
                detail:
                    "codes \(code ?? "-")/\(shown?.code ?? "-"); connected \(linked) \(pairedAfter) after asking; trust \(peer?.trust ?? "-"), encrypted \(peer?.encrypted ?? false), links \(peer?.links.map(\.transport) ?? []); 10 increments counted: \(counted)"
            )
        ]
    }

    /// A client that sends garbage to `target`'s channel or PSM (as the lab's checks use them): Debian's python3
    /// (AF_BLUETOOTH) over RFCOMM, from hci1 to channel 3 on hci0; BlueZ's own `l2test` over LE L2CAP (its test
    /// pattern is no frame), from hci0 to PSM 0x92 on hci1, which sends until the link closes.
    func hostileClient(
        _ transport: Alone, _ target: Daemon, linkedTo other: String, hci0: RFCOMMTransport.Adapter,
        hci1: RFCOMMTransport.Adapter
    ) async -> Outcome {
        let command: [String]
        switch transport {
        case .rfcomm:
            let script = """
                import socket, sys
                s = socket.socket(socket.AF_BLUETOOTH, socket.SOCK_STREAM, socket.BTPROTO_RFCOMM)
                s.bind((sys.argv[1], 0)); s.settimeout(10); s.connect((sys.argv[2], int(sys.argv[3])))
                s.sendall(bytes([0x02, 0x99, 0x00]) + b"this is not a frame" * 10)
                closed = False
                try:
                    while True:
                        data = s.recv(4096)
                        if not data:
                            closed = True
                            break
                except OSError:
                    closed = True
                print("closed" if closed else "open")
                """
            let path = FileManager.default.temporaryDirectory
                .appendingPathComponent("btlab-hostile-\(UInt32.random(in: 0...UInt32.max)).py").path
            _ = FileManager.default.createFile(atPath: path, contents: Data(script.utf8))
            command = ["/usr/bin/python3", path, hci1.address, hci0.address, "3"]
        case .le:
            let tools = ProcessInfo.processInfo.environment["BTLAB_TOOLS"] ?? ""
            command = [
                "/usr/bin/timeout", "15", "\(tools)/root/usr/bin/l2test", "-s", "-V", "le_public", "-P", "\(0x92)",
                "-i", "hci0", hci1.address,
            ]
        }
        let name = transport.rawValue
        guard let client = try? HostProcess.local(command) else {
            return Outcome(check: "garbage on \(name)", passed: false, detail: "cannot start \(command[0])")
        }
        let done = await waitUntil(.seconds(20), every: .milliseconds(100)) { !client.isRunning }
        let stillServing = target.connected == 1 && target.links(to: other).contains { $0.transport == name }
        return Outcome(
            check: "garbage on \(name) drops that client only", passed: done && stillServing,
            detail: "client finished \(done); \(target.name) still linked to its peer \(stillServing)")
    }

    /// Two daemons with the LAN and one Bluetooth transport: LAN active, Bluetooth standby; the LAN silenced
    /// mid-stream (2,000 increments, the LAN dropped from the 500th to the 1,000th), then back.
    func failover(
        _ bluetooth: Alone, _ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter
    ) async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        let name = bluetooth.rawValue
        let (port, peer, ports) =
            bluetooth == .rfcomm ? ("--bt-channel", "--bt-peer", (5, 6)) : ("--le-psm", "--le-peer", (0x96, 0x97))
        if bluetooth == .le { leAdvertising(true) }
        defer { if bluetooth == .le { leAdvertising(false) } }
        let a = try Daemon(
            "a2",
            [
                "--transport", "lan,\(name)", "--port", "47001", "--peer", "127.0.0.1:47002", "--bt-adapter", "hci0",
                port, "\(ports.0)", peer, "\(hci1.address)/\(ports.1)",
            ])
        let b = try Daemon(
            "b2", ["--transport", "lan,\(name)", "--port", "47002", "--bt-adapter", "hci1", port, "\(ports.1)"])
        var silenced = false
        defer {
            if silenced { shell(["tc", "qdisc", "del", "dev", "lo", "root"]) }
            a.stop()
            b.stop()
        }
        guard await waitUntil(.seconds(30), every: .milliseconds(100), { a.connected == 1 && b.connected == 1 }),
            let idA = a.peerID,
            let idB = b.peerID
        else { return [Outcome(check: "lan and \(name) links", passed: false, detail: "not connected")] }
        func states(_ daemon: Daemon, _ peer: String) -> [String] {
            daemon.links(to: peer).map { "\($0.transport) \($0.state)" }
        }
        let both = await waitUntil(.seconds(30), every: .milliseconds(100)) {
            states(a, idB) == ["lan active", "\(name) standby"] && states(b, idA) == ["lan active", "\(name) standby"]
        }
        outcomes.append(
            Outcome(check: "lan active, \(name) standby", passed: both, detail: "a's links to b: \(states(a, idB))"))
        let watch = try a.watch()
        let control = try b.client()
        var silencedAt: ContinuousClock.Instant?
        var restoredAt: ContinuousClock.Instant?
        var onBluetooth = false
        for index in 1...2_000 {
            _ = try control.call(ControlCommand.increment(count: 1), as: IncrementResult.self)
            if index == 500 {
                guard shell(["tc", "qdisc", "add", "dev", "lo", "root", "netem", "loss", "100%"]) else {
                    return outcomes + [Outcome(check: "silence the LAN path", passed: false, detail: "tc failed")]
                }
                silenced = true
                silencedAt = .now
                log("LAN silenced (all loopback traffic dropped)")
            }
            if index == 1_000 {
                onBluetooth = states(a, idB).first == "\(name) active"
                shell(["tc", "qdisc", "del", "dev", "lo", "root"])
                silenced = false
                restoredAt = .now
                log("LAN back")
            }
        }
        let exact = await waitUntil(.seconds(30), every: .milliseconds(100)) { a.count(of: idB) == 2_000 }
        try? await Task.sleep(for: .seconds(1))
        let final = a.count(of: idB)
        let backOnLAN = await waitUntil(.seconds(30), every: .milliseconds(100)) {
            states(a, idB).first == "lan active"
        }
        let events = watch.events
        let lost = events.contains { $0.event == .peerLost(peerID: idB) || $0.event.left(idB) }
        var switchTime = "?"
        if let silencedAt {
            let before =
                events.filter { $0.at <= silencedAt }.compactMap { $0.event.count(of: nil) }.max() ?? 0
            if let resumed = events.first(where: { $0.at > silencedAt && ($0.event.count(of: idB) ?? 0) > before + 5 })
            {
                switchTime = "\(resumed.at - silencedAt)"
            }
        }
        var backTime = "?"
        if let restoredAt,
            let moved = events.first(where: {
                guard $0.at > restoredAt, case .linkChanged(_, "lan", _, "active") = $0.event else { return false }
                return true
            })
        {
            backTime = "\(moved.at - restoredAt)"
        }
        outcomes.append(
            Outcome(
                check: "lan silenced: traffic on \(name), nothing lost or doubled, never lost",
                passed: onBluetooth && exact && final == 2_000 && !lost,
                detail:
                    "\(name) active while silenced \(onBluetooth); increments resumed \(switchTime) after the silence; a counts b at \(final.map(String.init) ?? "?"); reported lost \(lost)"
            ))
        outcomes.append(
            Outcome(
                check: "lan back: traffic back on lan", passed: backOnLAN,
                detail: "lan active again \(backTime) after it came back; links \(states(a, idB))"))
        return outcomes
    }
}
