import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// A meshed mesh's daemons, each through its control socket: checks that they are what the watch said, and measures
/// their CPU idle and while the three bubble holders move their bubbles at 60 Hz and every other daemon sends a
/// move-sized unreliable message to every peer at 60 Hz.
final class MeshLoad {
    private let controls: [ControlClient]
    private let daemons: [Int32]

    /// Connects to every daemon; throws unless each counts N-1 peers and each pid is a sessiond.
    init(paths: [String], daemons: [Int32]) throws {
        controls = try paths.map { try ControlClient.connect(path: $0, within: 5) }
        self.daemons = daemons
        for (index, control) in controls.enumerated() {
            let peers = try control.call(.status, as: StatusResult.self).peers
            guard peers == paths.count - 1 else {
                throw BenchFailure("mesh: h\(index + 1) has \(peers) peers after its events said \(paths.count - 1)")
            }
        }
        for pid in daemons where ProcessStats.name(pid) != "sessiond" {
            throw BenchFailure("mesh: process \(pid) is \(ProcessStats.name(pid)), not sessiond")
        }
    }

    /// Each daemon's CPU, as a percentage of one CPU, over `seconds`: idle, or `moving`; and the frames moved.
    func cpu(over seconds: Double, moving: Bool) throws -> (percent: [Double], frames: Int) {
        let holders = Array(0..<min(3, controls.count))
        if moving { try pickUp(holders) }
        let before = try daemons.map { try ProcessStats.cpuSeconds($0) }
        let begin = Date()
        let frames = moving ? try move(holders, seconds: seconds) : 0
        if !moving { usleep(UInt32(seconds * 1_000_000)) }
        let elapsed = Date().timeIntervalSince(begin)
        let after = try daemons.map { try ProcessStats.cpuSeconds($0) }
        if moving {
            for (view, index) in holders.enumerated() { try ask(controls[index], .drop(view: view)) }
        }
        return (zip(after, before).map { ($0 - $1) / elapsed * 100 }, frames)
    }

    /// Three holders (the app has three bubbles): pick up, wait for the coordinator's grant.
    private func pickUp(_ holders: [Int]) throws {
        for (view, index) in holders.enumerated() { try ask(controls[index], .pickUp(view: view)) }
        let deadline = Date().addingTimeInterval(5)
        for (view, index) in holders.enumerated() {
            let me = try controls[index].call(.status, as: StatusResult.self).peerID
            while try controls[index].call(.bubbles, as: [BubbleResult].self)[view].holder != me {
                guard Date() < deadline else {
                    throw BenchFailure("mesh: h\(index + 1) was not granted bubble \(view)")
                }
                usleep(10_000)
            }
        }
    }

    /// Frames at 60 Hz for `seconds`: each holder moves its bubble, every other daemon sends 12 bytes (a move's body)
    /// to every peer, unreliably; then every reply is read.
    private func move(_ holders: [Int], seconds: Double) throws -> Int {
        let period = 1.0 / 60
        let begin = Date()
        var frames = 0
        while Double(frames) < seconds * 60 {
            let pause = begin.addingTimeInterval(Double(frames) * period).timeIntervalSinceNow
            if pause > 0 { usleep(UInt32(pause * 1_000_000)) }
            let x = Double(frames % 300)
            for (index, control) in controls.enumerated() {
                if let view = holders.firstIndex(of: index) {
                    try control.send(.move(view: view, x: x, y: x))
                } else {
                    try control.send(.send(data: Data(count: 12), channel: .unreliable))
                }
            }
            for control in controls { try Self.reply(control) }
            frames += 1
        }
        return frames
    }

    private func ask(_ control: ControlClient, _ command: ControlCommand) throws {
        try control.send(command)
        try Self.reply(control)
    }

    /// Reads a reply; an error reply throws.
    private static func reply(_ control: ControlClient) throws {
        let head = try JSONDecoder().decode(Head.self, from: try control.readLine())
        guard head.ok else { throw BenchFailure("mesh: sessiond refused: \(head.error ?? "?")") }
    }

    private struct Head: Decodable {
        var ok: Bool
        var error: String?
    }
}
