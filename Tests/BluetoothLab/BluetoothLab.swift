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
}

/// Runs a command to completion; false (and a log line) when it cannot start or fails.
@discardableResult
func shell(_ arguments: [String]) -> Bool {
    guard let process = try? HostProcess.local(arguments) else {
        log("cannot start \(arguments.joined(separator: " "))")
        return false
    }
    while process.isRunning { usleep(10_000) }
    let status = process.exitStatus
    if status != 0 { log("\(arguments.joined(separator: " ")) exited \(status): \(process.stderr)") }
    return status == 0
}

/// A sessiond in the VM, with its own state directory and control socket under /tmp.
final class Daemon {
    let name: String
    let directory: String
    let process: HostProcess

    init(_ name: String, _ arguments: [String], admission: String = "open") throws {
        self.name = name
        directory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("btlab-\(name)-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/sessiond"
        process = try HostProcess.local(
            [
                binary, "--admission", admission, "--name", name, "--session", "lab", "--no-discovery", "--state-dir",
                directory,
                "--control", "\(directory)/sock", "--log-level", "info",
            ] + arguments)
    }

    func stop() { process.stop() }

    /// Two daemons with `--transport rfcomm` only, `first` on hci0 and `second` on hci1 (on the given channels); the
    /// first dials the second.
    static func rfcommPair(
        _ first: String, _ second: String, channels: (UInt8, UInt8), listenerAdapter hci1: RFCOMMTransport.Adapter
    ) throws -> (Daemon, Daemon) {
        let dialler = try Daemon(
            first,
            [
                "--transport", "rfcomm", "--bt-adapter", "hci0", "--bt-channel", "\(channels.0)", "--bt-peer",
                "\(hci1.address)/\(channels.1)",
            ])
        let listener = try Daemon(
            second, ["--transport", "rfcomm", "--bt-adapter", "hci1", "--bt-channel", "\(channels.1)"])
        return (dialler, listener)
    }

    /// Two daemons with `--transport le` only, `first` on hci0 and `second` on hci1 (listening on the given PSMs);
    /// the first dials the second. The lab's hci1 advertises (connectable), hci0 does not: the emulated controllers
    /// do not initiate an LE connection while they advertise.
    static func lePair(
        _ first: String, _ second: String, psms: (Int, Int), listenerAdapter hci1: RFCOMMTransport.Adapter
    ) throws -> (Daemon, Daemon) {
        let dialler = try Daemon(
            first,
            [
                "--transport", "le", "--bt-adapter", "hci0", "--le-psm", "\(psms.0)", "--le-peer",
                "\(hci1.address)/\(psms.1)",
            ])
        let listener = try Daemon(second, ["--transport", "le", "--bt-adapter", "hci1", "--le-psm", "\(psms.1)"])
        return (dialler, listener)
    }

    func call<Result: Decodable>(_ request: ControlRequest, as type: Result.Type) -> Result? {
        guard let client = try? ControlClient(path: "\(directory)/sock") else { return nil }
        client.setReadTimeout(seconds: 60)
        return try? client.call(request, as: type)
    }

    func client() throws -> ControlClient {
        let client = try ControlClient(path: "\(directory)/sock")
        client.setReadTimeout(seconds: 60)
        return client
    }

    var peerID: String? { call(ControlRequest(command: "status"), as: StatusResult.self)?.peerID }
    var connected: Int { call(ControlRequest(command: "status"), as: StatusResult.self)?.peers ?? 0 }
    var peers: [PeerResult] { call(ControlRequest(command: "peers"), as: [PeerResult].self) ?? [] }

    func count(of peer: String) -> UInt64? {
        call(ControlRequest(command: "counter"), as: CounterResult.self)?.peers[peer]?.count
    }

    func links(to peer: String) -> [LinkResult] { peers.first { $0.peerID == peer }?.links ?? [] }

    /// A `watch` of this daemon's events, read on a thread of its own.
    func watch() throws -> EventLog {
        let client = try client()
        try client.send(ControlRequest(command: "watch"))
        _ = try client.readLine()
        return EventLog(client)
    }
}

/// Events of a `watch`, each with when it was read.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(at: ContinuousClock.Instant, event: EventResult)] = []
    private let client: ControlClient

    init(_ client: ControlClient) {
        self.client = client
        client.setReadTimeout(seconds: 0)
        Thread.detachNewThread { [self] in
            while let line = try? self.client.readLine() {
                guard let event = try? JSONDecoder().decode(EventResult.self, from: line) else { continue }
                lock.withLock { entries.append((.now, event)) }
            }
        }
    }

    var events: [(at: ContinuousClock.Instant, event: EventResult)] { lock.withLock { entries } }
}

/// Turns LE advertising (connectable) of hci1 on or off, with BlueZ's btmgmt: the kernel dials an LE peer only while it
/// advertises. hci0 never advertises: these emulated controllers make no LE connection while the initiator does.
func leAdvertising(_ on: Bool) {
    let btmgmt = (ProcessInfo.processInfo.environment["BTLAB_TOOLS"] ?? "") + "/root/usr/bin/btmgmt"
    let settings = on ? ["connectable", "advertising"] : ["advertising", "connectable"]
    for setting in settings { _ = shell([btmgmt, "-i", "hci1", setting, on ? "on" : "off"]) }
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

struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The lab tests; exits 1 if any fails.")

    @Flag(help: "Only the checks over LE L2CAP (scripts/btlab runs them in a boot of their own).") var le = false

    func run() async throws {
        let (hci0, hci1) = try controllers()
        log("controllers: hci0 \(hci0.address), hci1 \(hci1.address)")
        var outcomes: [Outcome] = []
        if le {
            outcomes += try await alone(.le, hci0, hci1)
        } else {
            outcomes += try await alone(.rfcomm, hci0, hci1)
            outcomes += try await pairingOverRFCOMM(hci0, hci1)
            outcomes += try await failover(hci0, hci1)
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
        let (a, b) =
            transport == .rfcomm
            ? try Daemon.rfcommPair("a", "b", channels: (3, 4), listenerAdapter: hci1)
            : try Daemon.lePair("la", "lb", psms: (0x91, 0x92), listenerAdapter: hci1)
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

        // 1,000 increments, one by one.
        let control = try a.client()
        let counting = ContinuousClock.now
        for _ in 0..<1_000 {
            _ = try control.call(ControlRequest(command: "increment", count: 1), as: IncrementResult.self)
        }
        let arrived = await waitUntil(.seconds(30), every: .milliseconds(100)) { b.count(of: idA) == 1_000 }
        try? await Task.sleep(for: .seconds(1))
        let final = b.count(of: idA)
        outcomes.append(
            Outcome(
                check: "1,000 increments over \(name) exactly once", passed: arrived && final == 1_000,
                detail: "b counts a at \(final.map(String.init) ?? "?") after \(ContinuousClock.now - counting)"))

        // Bubbles: a picks bubble 2 up, moves it, drops it; b sees the holder, the moves and the drop.
        _ = try control.call(ControlRequest(command: "pickup", view: 2), as: DoneResult.self)
        let held = await waitUntil(.seconds(10), every: .milliseconds(100)) {
            b.call(ControlRequest(command: "bubbles"), as: [BubbleResult].self)?.first { $0.view == 2 }?.holder == idA
        }
        for step in 1...5 {
            _ = try control.call(
                ControlRequest(command: "move", view: 2, x: Double(10 * step), y: Double(20 * step)),
                as: DoneResult.self)
        }
        let moved = await waitUntil(.seconds(10), every: .milliseconds(100)) {
            let bubble = b.call(ControlRequest(command: "bubbles"), as: [BubbleResult].self)?.first { $0.view == 2 }
            return bubble?.x == 50 && bubble?.y == 100
        }
        _ = try control.call(ControlRequest(command: "drop", view: 2), as: DoneResult.self)
        let dropped = await waitUntil(.seconds(10), every: .milliseconds(100)) {
            b.call(ControlRequest(command: "bubbles"), as: [BubbleResult].self)?.first { $0.view == 2 }?.holder == nil
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
            watch.events.contains { $0.event.event == "peerLeft" && $0.event.peerID == idB }
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
        _ = await waitUntil(.seconds(10), every: .milliseconds(100)) { a.peerID != nil && b.peerID != nil }
        guard let idA = a.peerID, let idB = b.peerID else {
            return [Outcome(check: "pairing over rfcomm", passed: false, detail: "the daemons did not start")]
        }
        let started = ContinuousClock.now
        var asked: PairResult?
        _ = await waitUntil(.seconds(30), every: .milliseconds(200)) {
            asked = a.call(ControlRequest(command: "pair", peer: idB), as: PairResult.self)
            return asked?.pairing != nil
        }
        var shown: PairingResult?
        _ = await waitUntil(.seconds(10), every: .milliseconds(100)) {
            shown = b.call(ControlRequest(command: "pairings"), as: [PairingResult].self)?.first
            return shown != nil
        }
        let code = asked?.pairing?.code
        let same = code != nil && code == shown?.code
        if let code, same {
            _ = b.call(ControlRequest(command: "pair", peer: idA, code: code), as: PairResult.self)
            _ = a.call(ControlRequest(command: "pair", peer: idB, code: code), as: PairResult.self)
        }
        let linked = await waitUntil(.seconds(30), every: .milliseconds(100)) { a.connected == 1 && b.connected == 1 }
        let pairedAfter = ContinuousClock.now - started
        let peer = a.peers.first { $0.peerID == idB }
        _ = a.call(ControlRequest(command: "increment", count: 10), as: IncrementResult.self)
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

    /// Two daemons with `--transport all`: LAN active, RFCOMM standby; LAN silenced mid-stream, then back.
    func failover(_ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter) async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        let a = try Daemon(
            "a2",
            [
                "--transport", "all", "--port", "47001", "--peer", "127.0.0.1:47002", "--bt-adapter", "hci0",
                "--bt-channel", "5", "--bt-peer", "\(hci1.address)/6",
            ])
        let b = try Daemon(
            "b2", ["--transport", "all", "--port", "47002", "--bt-adapter", "hci1", "--bt-channel", "6"])
        var silenced = false
        defer {
            if silenced { shell(["tc", "qdisc", "del", "dev", "lo", "root"]) }
            a.stop()
            b.stop()
        }
        guard await waitUntil(.seconds(30), every: .milliseconds(100), { a.connected == 1 && b.connected == 1 }),
            let idA = a.peerID,
            let idB = b.peerID
        else { return [Outcome(check: "lan and rfcomm links", passed: false, detail: "not connected")] }
        func states(_ daemon: Daemon, _ peer: String) -> [String] {
            daemon.links(to: peer).map { "\($0.transport) \($0.state)" }
        }
        let both = await waitUntil(.seconds(30), every: .milliseconds(100)) {
            states(a, idB) == ["lan active", "rfcomm standby"] && states(b, idA) == ["lan active", "rfcomm standby"]
        }
        outcomes.append(
            Outcome(check: "lan active, rfcomm standby", passed: both, detail: "a's links to b: \(states(a, idB))"))
        let watch = try a.watch()
        let control = try b.client()
        var silencedAt: ContinuousClock.Instant?
        var restoredAt: ContinuousClock.Instant?
        var onRFCOMM = false
        for index in 1...2_000 {
            _ = try control.call(ControlRequest(command: "increment", count: 1), as: IncrementResult.self)
            if index == 500 {
                guard shell(["tc", "qdisc", "add", "dev", "lo", "root", "netem", "loss", "100%"]) else {
                    return outcomes + [Outcome(check: "silence the LAN path", passed: false, detail: "tc failed")]
                }
                silenced = true
                silencedAt = .now
                log("LAN silenced (all loopback traffic dropped)")
            }
            if index == 1_000 {
                onRFCOMM = states(a, idB).first == "rfcomm active"
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
        let lost = events.contains {
            ($0.event.event == "peerLost" || $0.event.event == "peerLeft") && $0.event.peerID == idB
        }
        var switchTime = "?"
        if let silencedAt {
            let before =
                events.filter { $0.at <= silencedAt && $0.event.event == "counter" }.compactMap {
                    $0.event.count
                }.max() ?? 0
            if let resumed = events.first(where: {
                $0.at > silencedAt && $0.event.event == "counter" && $0.event.peerID == idB
                    && ($0.event.count ?? 0) > before + 5
            }) {
                switchTime = "\(resumed.at - silencedAt)"
            }
        }
        var backTime = "?"
        if let restoredAt,
            let moved = events.first(where: {
                $0.at > restoredAt && $0.event.event == "linkChanged" && $0.event.transport == "lan"
                    && $0.event.state == "active"
            })
        {
            backTime = "\(moved.at - restoredAt)"
        }
        outcomes.append(
            Outcome(
                check: "lan silenced: traffic on rfcomm, nothing lost or doubled, never lost",
                passed: onRFCOMM && exact && final == 2_000 && !lost,
                detail:
                    "rfcomm active while silenced \(onRFCOMM); increments resumed \(switchTime) after the silence; a counts b at \(final.map(String.init) ?? "?"); reported lost \(lost)"
            ))
        outcomes.append(
            Outcome(
                check: "lan back: traffic back on lan", passed: backOnLAN,
                detail: "lan active again \(backTime) after it came back; links \(states(a, idB))"))
        return outcomes
    }
}

/// Round-trip percentiles of one row of the comparison, in microseconds.
struct Row: Encodable {
    var row: String
    var p50_us: Double
    var p90_us: Double
    var p99_us: Double
    var note: String?
}

func percentiles(_ row: String, _ samples: [Double]) -> Row {
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return (sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] * 10).rounded() / 10
    }
    return Row(row: row, p50_us: at(0.5), p90_us: at(0.9), p99_us: at(0.99))
}

/// Plain blocking sockets, for the floors the transports are compared with.
enum RawPingPong {
    static func fail(_ what: String) -> Never {
        log("\(what): \(String(cString: strerror(errno)))")
        exit(1)
    }

    static func readExactly(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count <= 0 { return false }
            offset += count
        }
        return true
    }

    /// Echoes 16-byte messages on `accepted` until it closes (on a thread of its own).
    static func echo(_ accepted: Int32) {
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 16)
            while readExactly(accepted, &buffer) {
                _ = buffer.withUnsafeBytes { write(accepted, $0.baseAddress, 16) }
            }
            close(accepted)
        }
    }

    /// `count` round trips of 16 bytes on a connected socket, in microseconds.
    static func measure(_ fd: Int32, count: Int) -> [Double] {
        var buffer = [UInt8](repeating: 7, count: 16)
        var samples: [Double] = []
        for index in 0..<(count + 100) {
            let start = ContinuousClock.now
            _ = buffer.withUnsafeBytes { write(fd, $0.baseAddress, 16) }
            guard readExactly(fd, &buffer) else { fail("read") }
            if index >= 100 { samples.append(Double((ContinuousClock.now - start) / .nanoseconds(1)) / 1_000) }
        }
        close(fd)
        return samples
    }

    static func tcp(count: Int) -> [Double] {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        listen(server, 1)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(server, $0, &length) }
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { fail("tcp connect") }
        let accepted = accept(server, nil, nil)
        setsockopt(accepted, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        echo(accepted)
        defer { close(server) }
        return measure(client, count: count)
    }

    static func rfcomm(count: Int, from client: String, to server: String, channel: UInt8) -> [Double] {
        let listener = socket(AF_BLUETOOTH, Int32(SOCK_STREAM.rawValue), BTPROTO_RFCOMM)
        var local = sockaddr_rc()
        local.rc_family = sa_family_t(AF_BLUETOOTH)
        local.rc_channel = channel
        str2ba(server, &local.rc_bdaddr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_rc>.size))
            }
        }
        guard bound == 0, listen(listener, 1) == 0 else { fail("rfcomm listen") }
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_STREAM.rawValue), BTPROTO_RFCOMM)
        var source = sockaddr_rc()
        source.rc_family = sa_family_t(AF_BLUETOOTH)
        str2ba(client, &source.rc_bdaddr)
        withUnsafePointer(to: &source) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(fd, $0, socklen_t(MemoryLayout<sockaddr_rc>.size))
            }
        }
        var remote = local
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_rc>.size))
            }
        }
        guard connected == 0 else { fail("rfcomm connect") }
        let accepted = accept(listener, nil, nil)
        echo(accepted)
        defer { close(listener) }
        return measure(fd, count: count)
    }
}

extension RawPingPong {
    /// `count` round trips over an LE L2CAP channel (LE CoC) from `client` to `server`'s `psm`, echoed on `server`;
    /// each message is one SDU. `server` must advertise (connectable) for the kernel to connect to it.
    static func le(count: Int, from client: String, to server: String, psm: UInt16) -> [Double] {
        func address(_ text: String, psm: UInt16) -> sockaddr_l2 {
            var address = sockaddr_l2()
            address.l2_family = sa_family_t(AF_BLUETOOTH)
            address.l2_psm = psm.littleEndian
            str2ba(text, &address.l2_bdaddr)
            address.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
            return address
        }
        func call(
            _ function: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32, _ fd: Int32, _ address: sockaddr_l2
        )
            -> Int32
        {
            var address = address
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    function(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
                }
            }
        }
        let listener = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue), BTPROTO_L2CAP)
        guard call(bind, listener, address(server, psm: psm)) == 0, listen(listener, 1) == 0 else {
            fail("le listen")
        }
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue), BTPROTO_L2CAP)
        guard call(bind, fd, address(client, psm: 0)) == 0 else { fail("le bind") }
        guard call(connect, fd, address(server, psm: psm)) == 0 else { fail("le connect") }
        let accepted = accept(listener, nil, nil)
        echo(accepted)
        defer { close(listener) }
        return measure(fd, count: count)
    }
}

struct Compare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Round trips of 16-byte messages: raw TCP, raw RFCOMM and raw LE L2CAP, then the LAN, RFCOMM and LE "
            + "transports of sessiond; RFCOMM again during a push over it.")

    @Option(help: "Round trips per row.") var count = 1_000
    @Flag(help: "One JSON object per row.") var json = false

    func run() async throws {
        let (hci0, hci1) = try controllers()
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
                ControlRequest(
                    command: "bench", count: count, peer: idB, transport: transport, channel: "reliable", size: 16),
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
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            for row in rows { print(String(decoding: try encoder.encode(row), as: UTF8.self)) }
            return
        }
        print("emulated controllers (btvirt in a QEMU VM): round trips of 16-byte messages, \(count) per row")
        print("row                               p50 us    p90 us    p99 us   p50 vs raw (during a push: vs idle)")
        for (index, row) in rows.enumerated() {
            // Each transport against its raw floor; the row during a push against RFCOMM idle.
            let floor =
                [3: rows[0].p50_us, 4: rows[1].p50_us, 5: rows[2].p50_us, 6: rows[4].p50_us][index] ?? row.p50_us
            let ratio = String(format: "%.2fx", row.p50_us / floor)
            print(
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
        let (sender, receiver) = try Daemon.rfcommPair("cc", "cd", channels: (13, 14), listenerAdapter: hci1)
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
        try client.send(ControlRequest(command: "push", peer: peer, path: file, name: "push.bin"))
        try? await Task.sleep(for: .milliseconds(300))  // the transfer under way
        let result = sender.call(
            ControlRequest(command: "bench", count: 30, peer: peer, transport: "rfcomm", channel: "reliable", size: 16),
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
