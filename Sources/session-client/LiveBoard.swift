import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// What the live view shows: fed by the event thread and by this peer's own requests, read by the drawing loop.
final class LiveBoard: @unchecked Sendable {
    /// A consistent copy of the board, for drawing.
    struct Snapshot {
        var bubbles: [BubbleResult]
        var names: [String: String]
        var lastEvent: String?
        var failure: String?
    }

    // Everything below is guarded by `lock`.
    private let lock = NSLock()
    private var state: Snapshot

    /// A board starting from the daemon's `bubbles` and `peers` answers.
    init(bubbles: [BubbleResult], names: [String: String]) {
        state = Snapshot(bubbles: bubbles.sorted { $0.view < $1.view }, names: names)
    }

    /// A copy of the current state.
    func snapshot() -> Snapshot {
        lock.lock()
        defer { lock.unlock() }
        return state
    }

    /// Applies one event from `watch`.
    func apply(_ event: ControlEvent) {
        lock.lock()
        defer { lock.unlock() }
        state.lastEvent = event.humanText
        switch event {
        case .holder(let view, let holder):
            update(view) { $0.holder = holder }
        case .move(let view, let x, let y, _):
            update(view) { bubble in (bubble.x, bubble.y) = (x, y) }
        case .drop(let view, let x, let y, _):
            update(view) { bubble in
                (bubble.x, bubble.y) = (x, y)
                bubble.holder = nil
            }
        case .peerConnected(let peerID, let name), .peerState(let peerID, let name, _, _):
            state.names[peerID] = name
        default:
            break
        }
    }

    /// This peer moved `view` to (x, y) and the daemon took it.
    func moved(_ view: Int, x: Double, y: Double) {
        lock.lock()
        defer { lock.unlock() }
        update(view) { bubble in
            bubble.x = x
            bubble.y = y
        }
    }

    /// This peer dropped `view` and the daemon took it.
    func dropped(_ view: Int) {
        lock.lock()
        defer { lock.unlock() }
        update(view) { $0.holder = nil }
    }

    /// The event stream ended: the view cannot follow the bubbles any more.
    func fail(_ message: String) {
        lock.lock()
        defer { lock.unlock() }
        state.failure = message
    }

    /// Changes bubble `view`, if there is one; call with `lock` held.
    private func update(_ view: Int?, _ change: (inout BubbleResult) -> Void) {
        guard let view, let index = state.bubbles.firstIndex(where: { $0.view == view }) else { return }
        change(&state.bubbles[index])
    }
}

/// Reads `watch` events on a thread of its own and feeds them to a board, waking the drawing loop after each.
///
/// Once `start()` has run, the thread is the only user of the connection.
final class EventReader: @unchecked Sendable {
    private let daemon: Daemon
    private let board: LiveBoard
    private let wake: WakePipe

    /// A reader of `daemon`, which has already been answered `watch`.
    init(daemon: Daemon, board: LiveBoard, wake: WakePipe) {
        self.daemon = daemon
        self.board = board
        self.wake = wake
    }

    /// Starts the reading thread.
    func start() {
        Thread { self.read() }.start()
    }

    private func read() {
        while true {
            do {
                guard let line = try daemon.readLine(deadline: nil) else { continue }
                if let event = try? JSONDecoder().decode(ControlEvent.self, from: line) {
                    board.apply(event)
                    wake.poke()
                }
            } catch {
                board.fail(error.message)
                wake.poke()
                return
            }
        }
    }
}

/// A pipe that wakes a `poll()` on another thread.
final class WakePipe: Sendable {
    /// The end to poll.
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws(ClientError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw ClientError(.broken, "pipe(): \(String(cString: strerror(errno)))")
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the poller; a full pipe already will.
    func poke() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe.
    func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &bytes, bytes.count) > 0 {}
    }
}
