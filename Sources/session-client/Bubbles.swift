import ArgumentParser
import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// `bubbles`: a live view of the bubbles in the terminal, driven with the keyboard.
struct Bubbles: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Shows the bubbles live; arrow keys move the one you hold.",
        discussion: """
            Keys: 1 2 3 or Tab select a bubble; space picks it up, or drops it if you hold it; the arrow keys move \
            the bubble you hold; q quits. Needs a terminal.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(
        parsing: .unconditional,
        help: "How far an arrow key moves a bubble, in coordinate units (0.1...\(Int(Limits.step.upperBound))).")
    var step = CommandLineNumber(10.0)

    func validate() throws {
        try step.validated("--step", in: Limits.step)
    }

    func run() throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw ClientError(.usage, "bubbles: the live view needs a terminal (stdin and stdout must be one)")
        }
        let requests = try global.connect()
        let status = try requests.call(ControlCommand.status).decode(StatusResult.self)
        // Watch before taking the snapshot: events queued meanwhile set absolute values, so replaying them after the
        // snapshot converges on the daemon's state.
        let events = try global.connect()
        _ = try events.call(ControlCommand.watch())
        let bubbles = try requests.call(ControlCommand.bubbles).decode([BubbleResult].self)
        let peers = (try? requests.call(ControlCommand.peers).decode([PeerResult].self)) ?? []
        var names = Dictionary(peers.map { ($0.peerID, $0.name) }, uniquingKeysWith: { first, _ in first })
        names[status.peerID] = status.name
        let board = LiveBoard(bubbles: bubbles, names: names)
        let wake = try WakePipe()
        EventReader(daemon: events, board: board, wake: wake).start()

        let terminal = try RawTerminal()
        var view = LiveView(
            requests: requests, board: board, wake: wake, step: step.value(or: 10),
            screen: BubbleScreen(me: status.peerID, name: status.name, selected: 0))
        let outcome = Result { () throws(ClientError) in try view.run() }
        terminal.restore()
        try outcome.get()
    }
}

/// The live view's loop: reads keys, sends requests, redraws after every key and every event.
struct LiveView {
    let requests: Daemon
    let board: LiveBoard
    let wake: WakePipe
    let step: Double
    var screen: BubbleScreen

    /// Runs until `q`; throws when the daemon goes away.
    mutating func run() throws(ClientError) {
        var pending: [UInt8] = []
        while true {
            let snapshot = board.snapshot()
            if let failure = snapshot.failure { throw ClientError(.broken, failure) }
            draw(snapshot)
            var descriptors = [
                pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            // An unfinished escape sequence gets a moment to complete; a lone Escape is then dropped.
            let ready = poll(&descriptors, 2, pending.isEmpty ? -1 : 50)
            if ready < 0 {
                if errno == EINTR { continue }
                throw ClientError(.broken, "poll(): \(String(cString: strerror(errno)))")
            }
            if ready == 0 {
                pending.removeAll()
                continue
            }
            if descriptors[1].revents != 0 { wake.drain() }
            let input = descriptors[0].revents
            if input & Int16(POLLIN) != 0 {
                var bytes = [UInt8](repeating: 0, count: 256)
                let count = read(STDIN_FILENO, &bytes, bytes.count)
                if count == 0 { return }
                if count < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    return
                }
                pending += bytes[..<count]
                for key in Key.take(from: &pending) {
                    if key == .quit { return }
                    try handle(key, board.snapshot())
                }
            } else if input & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                return
            }
        }
    }

    /// Does what `key` asks.
    private mutating func handle(_ key: Key, _ snapshot: LiveBoard.Snapshot) throws(ClientError) {
        let bubbles = snapshot.bubbles
        guard !bubbles.isEmpty else { return }
        screen.selected = min(screen.selected, bubbles.count - 1)
        switch key {
        case .select(let index) where index < bubbles.count:
            screen.selected = index
            screen.message = nil
        case .tab:
            screen.selected = (screen.selected + 1) % bubbles.count
            screen.message = nil
        case .space:
            let bubble = bubbles[screen.selected]
            if bubble.holder == screen.me {
                screen.message = try send(.drop(view: bubble.view))
                if screen.message == nil {
                    board.dropped(bubble.view)
                    screen.message = "dropped bubble \(bubble.view)"
                }
            } else {
                screen.message =
                    try send(ControlCommand.pickUp(view: bubble.view))
                    ?? "asked for bubble \(bubble.view); the coordinator decides"
            }
        case .up, .down, .left, .right:
            try move(key, bubbles)
        default:
            break
        }
    }

    /// Moves the selected bubble if this peer holds it, otherwise the first one it holds.
    private mutating func move(_ key: Key, _ bubbles: [BubbleResult]) throws(ClientError) {
        let held =
            bubbles[screen.selected].holder == screen.me
            ? bubbles[screen.selected] : bubbles.first { $0.holder == screen.me }
        guard let bubble = held else {
            screen.message = "you hold no bubble: select one and press space to pick it up"
            return
        }
        let (dx, dy): (Double, Double) =
            switch key {
            case .up: (0, -step)
            case .down: (0, step)
            case .left: (-step, 0)
            default: (step, 0)
            }
        let x = min(max(bubble.x + dx, 0), BubbleScreen.extent)
        let y = min(max(bubble.y + dy, 0), BubbleScreen.extent)
        screen.message = try send(.move(view: bubble.view, x: x, y: y))
        if screen.message == nil { board.moved(bubble.view, x: x, y: y) }
    }

    /// Sends `request`; returns nil when the daemon took it, its refusal in words otherwise.
    private func send(_ request: ControlCommand) throws(ClientError) -> String? {
        do {
            _ = try requests.call(request)
            return nil
        } catch {
            guard error.kind == .refused else { throw error }
            return "sessiond: " + error.message
        }
    }

    /// Redraws the whole screen.
    private func draw(_ snapshot: LiveBoard.Snapshot) {
        let lines = screen.lines(snapshot)
        Output.write("\u{1B}[H" + lines.joined(separator: "\u{1B}[K\r\n") + "\u{1B}[K\u{1B}[J", to: STDOUT_FILENO)
    }
}
