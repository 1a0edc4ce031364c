import Foundation
import SessionControl
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Watches every daemon of a mesh until each counts N-1 connected peers: a thread per daemon subscribes to its events
/// as soon as its control socket is there, over a snapshot of the peers it already had then. Nothing waits on one
/// daemon while another has something to say, and nothing polls a daemon that answers, which would take CPU from the
/// daemons being measured.
struct MeshWatch: Sendable {
    /// Nanoseconds since the last start at which each daemon first served its control socket, and at which it
    /// counted every other as connected.
    struct Times: Sendable {
        var serving: [UInt64]
        var meshed: [UInt64]
    }

    let paths: [String]
    let start: UInt64

    /// Watches the daemons whose control sockets are `paths`; `start` is the last start (``now()``).
    init(paths: [String], start: UInt64) throws {
        self.paths = paths
        self.start = start
    }

    /// Wall-clock nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Waits (at most 60 s) until every daemon is meshed.
    func waitForMesh() throws -> Times {
        let n = paths.count
        let serving = Mutex<[UInt64?]>(Array(repeating: nil, count: n))
        let meshed = Mutex<[UInt64?]>(Array(repeating: nil, count: n))
        let counts = Mutex<[Int]>(Array(repeating: 0, count: n))
        let deadline = Date().addingTimeInterval(60)
        let group = DispatchGroup()
        for (index, path) in paths.enumerated() {
            group.enter()
            let thread = Thread { [start] in
                defer { group.leave() }
                Self.watch(path: path, peers: n - 1, deadline: deadline, start: start) { event in
                    switch event {
                    case .serving(let at): serving.withLock { $0[index] = at }
                    case .count(let count): counts.withLock { $0[index] = count }
                    case .meshed(let at): meshed.withLock { $0[index] = at }
                    }
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        let times = meshed.withLock { $0 }
        guard times.allSatisfy({ $0 != nil }) else {
            let seen = counts.withLock { $0 }
            let missing = times.indices.filter { times[$0] == nil }.map { "h\($0 + 1):\(seen[$0])" }
            throw BenchFailure("mesh: not meshed after 60 s; peers seen: \(missing.joined(separator: " "))")
        }
        return Times(serving: serving.withLock { $0 }.map { $0 ?? 0 }, meshed: times.map { $0! })
    }

    private enum Progress {
        case serving(UInt64)
        case count(Int)
        case meshed(UInt64)
    }

    /// One daemon's watch, on its own thread.
    private static func watch(
        path: String, peers: Int, deadline: Date, start: UInt64, report: (Progress) -> Void
    ) {
        var watcher: ControlClient?
        while watcher == nil, Date() < deadline {
            watcher = try? ControlClient(path: path)
            if watcher == nil { usleep(2_000) }
        }
        guard let watcher else { return }
        report(.serving(now() - start))
        do {
            try watcher.startWatching()
        } catch {
            return
        }
        watcher.setReadTimeout(seconds: 1)
        var connected = snapshot(path) ?? []
        while Date() < deadline {
            report(.count(connected.count))
            if connected.count == peers { return report(.meshed(now() - start)) }
            let event: ControlEvent
            do {
                event = try watcher.nextEvent()
            } catch {
                // No event for a second: events can be missed (a slow reader's buffer), and one sent before the
                // snapshot can arrive after it; so the daemon is asked again.
                if let peers = snapshot(path) { connected = peers }
                continue
            }
            switch event {
            case .peerConnected(let peer, _): connected.insert(peer)
            case .peerLost(let peer), .peerLeft(let peer, _): connected.remove(peer)
            case .eventsMissed: if let peers = snapshot(path) { connected = peers }
            default: break
            }
        }
    }

    /// The peers the daemon counts as connected now, asked on a connection of its own.
    private static func snapshot(_ path: String) -> Set<String>? {
        guard let client = try? ControlClient(path: path),
            let peers = try? client.call(.peers, as: [PeerResult].self)
        else { return nil }
        return Set(peers.filter { $0.state == "connected" }.map(\.peerID))
    }
}
