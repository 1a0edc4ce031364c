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

/// A sessiond in the VM, with its own state directory and control socket under /tmp.
final class Daemon {
    let name: String
    let directory: String
    let process: HostProcess

    /// Starts sessiond with `arguments`, without any discovery unless `discovery` (LE discovery, over LE).
    init(_ name: String, _ arguments: [String], admission: String = "open", discovery: Bool = false) throws {
        self.name = name
        directory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("btlab-\(name)-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/sessiond"
        process = try HostProcess.local(
            [
                binary, "--admission", admission, "--name", name, "--session", "lab", "--state-dir", directory,
                "--control", "\(directory)/sock", "--log-level", discovery ? "debug" : "info",
            ] + (discovery ? [] : ["--no-discovery"]) + arguments)
    }

    func stop() { process.stop() }

    /// Two daemons with one Bluetooth transport only (`rfcomm` or `le`), `first` on hci0 and `second` on hci1, each
    /// listening on its channel or PSM of `ports`; the first dials the second. Over LE the listener's hci1 must
    /// advertise (``leAdvertising(_:)``); hci0 does not, since the emulated controllers do not initiate an LE connection
    /// while they advertise.
    static func pair(
        _ first: String, _ second: String, transport: String, ports: (Int, Int),
        listenerAdapter hci1: RFCOMMTransport.Adapter
    ) throws -> (Daemon, Daemon) {
        let (port, peer) = transport == "le" ? ("--le-psm", "--le-peer") : ("--bt-channel", "--bt-peer")
        let dialler = try Daemon(
            first,
            [
                "--transport", transport, "--bt-adapter", "hci0", port, "\(ports.0)", peer,
                "\(hci1.address)/\(ports.1)",
            ])
        let listener = try Daemon(second, ["--transport", transport, "--bt-adapter", "hci1", port, "\(ports.1)"])
        return (dialler, listener)
    }

    func call<Result: Decodable>(_ request: ControlCommand, as type: Result.Type) -> Result? {
        guard let client = try? ControlClient(path: "\(directory)/sock") else { return nil }
        client.setReadTimeout(seconds: 60)
        return try? client.call(request, as: type)
    }

    func client() throws -> ControlClient {
        let client = try ControlClient(path: "\(directory)/sock")
        client.setReadTimeout(seconds: 60)
        return client
    }

    var peerID: String? { call(ControlCommand.status, as: StatusResult.self)?.peerID }
    var connected: Int { call(ControlCommand.status, as: StatusResult.self)?.peers ?? 0 }
    var peers: [PeerResult] { call(ControlCommand.peers, as: [PeerResult].self) ?? [] }

    func count(of peer: String) -> UInt64? {
        call(ControlCommand.counter, as: CounterResult.self)?.peers[peer]?.count
    }

    func links(to peer: String) -> [LinkResult] { peers.first { $0.peerID == peer }?.links ?? [] }

    /// This daemon's own count.
    var localCount: UInt64? { call(ControlCommand.counter, as: CounterResult.self)?.local }

    /// Waits until bubble 0 is held by `holder` at (100.5, -20.25), where a central's pick-up and move put it.
    func heldAtTheCentralsMove(by holder: String) async -> Bool {
        await waitUntil(.seconds(15), every: .milliseconds(100)) {
            let bubble = self.call(ControlCommand.bubbles, as: [BubbleResult].self)?.first { $0.view == 0 }
            return bubble?.x == 100.5 && bubble?.y == -20.25 && bubble?.holder == holder
        }
    }

    /// A `watch` of this daemon's events, read on a thread of its own.
    func watch() throws -> EventLog {
        let client = try client()
        try client.send(ControlCommand.watch())
        _ = try client.readLine()
        return EventLog(client)
    }
}

/// Events of a `watch`, each with when it was read.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(at: ContinuousClock.Instant, event: ControlEvent)] = []
    private let client: ControlClient

    init(_ client: ControlClient) {
        self.client = client
        client.setReadTimeout(seconds: 0)
        Thread.detachNewThread { [self] in
            while let line = try? self.client.readLine() {
                guard let event = try? JSONDecoder().decode(ControlEvent.self, from: line) else { continue }
                lock.withLock { entries.append((.now, event)) }
            }
        }
    }

    var events: [(at: ContinuousClock.Instant, event: ControlEvent)] { lock.withLock { entries } }
}

extension ControlEvent {
    /// The peer said bye.
    func left(_ peer: String) -> Bool {
        guard case .peerLeft(peer, _) = self else { return false }
        return true
    }

    /// A counter event's count: `peer`'s, or anyone's when nil.
    func count(of peer: String?) -> UInt64? {
        guard case .counter(let who, let count, _) = self, peer == nil || who == peer else { return nil }
        return count
    }
}
