import BubblesAndCounter
import Foundation
import LanSession
import NIOCore
import ServiceLifecycle
import SessionControl

/// The session's events and the apps' as they happen, on the daemon's event loop, where both are made, through one
/// `EventFanout`: each goes to the hub's observer first (the operator's log and the stream desk, which see every
/// event), then, numbered (`seq`, from 1 in each run of the daemon), into the `EventHistory` and, encoded once as a
/// JSON line, to every `watch` connection's `WatchWriter` (while nobody watches, it is not encoded), and to every
/// stream subscribed (the pages' broadcast). A `watch` gets its events with no task and no stream in between: the line is written to its socket
/// before the loop goes on, or waits, bounded, in its writer when the client does not keep up. A watcher that comes
/// back with the number of the last event it saw gets those after it from the history, then the live ones, with
/// none missing and none twice; or the exact count of those it missed.
/// A stream that falls behind keeps the oldest events it has not read and gets `eventsMissed` with the count of those
/// it missed, as a watcher's connection does.
///
/// As a `Service` it runs until the session's events and the apps' end (the session stopped), or the daemon's
/// shutdown, then ends every watcher and every stream.
final class EventHub: Service {
    private struct State {
        var watchers: [Int: NIOLoopBound<WatchWriter>] = [:]
        var nextID = 0
        /// Of the session's events and the apps': those not ended yet.
        var sourcesOpen = 2
        var isEnded = false
        var encoder = JSONEncoder()
        var history: EventHistory
    }

    /// Unread events a subscribed stream holds, at most (``subscribe(bufferSize:)``).
    static let streamBuffer = 10_000

    /// The loop the hub's state lives on: the session's.
    let loop: any EventLoop
    private let state: NIOLoopBoundBox<State>
    private let fanout = EventFanout<DaemonEvent>(missed: { .session(.eventsMissed($0)) })
    private let endPromise: EventLoopPromise<Void>

    /// A hub on `loop`, of the daemon's run `run`, keeping `history`'s lines at most; `observe` sees every event
    /// first, on the loop.
    init(
        loop: any EventLoop, run: String = EventHistory.newRun(), history: Int = EventHistory.maxLines,
        observe: @escaping @Sendable (DaemonEvent) -> Void = { _ in }
    ) {
        self.loop = loop
        self.state = NIOLoopBoundBox.makeBoxSendingValue(
            State(history: EventHistory(run: run, maxLines: history)), eventLoop: loop)
        self.endPromise = loop.makePromise()
        fanout.observe(observe)
        fanout.observe { [weak self] event in self?.write(event) }
    }

    deinit {
        endPromise.succeed()  // a daemon that did not get to serve
    }

    /// Succeeds once the session's events and the apps' ended (the session stopped), or the hub was ended.
    var ended: EventLoopFuture<Void> { endPromise.futureResult }

    /// Waits until the events end, then for the group's graceful shutdown (the group shuts its services down in
    /// turn); cancelled, ends the hub.
    func run() async {
        await withTaskCancellationHandler {
            try? await ended.get()
        } onCancel: {
            end()
        }
        try? await gracefulShutdown()
    }

    /// Takes the session's events (each data message one by one) and the apps' from now on.
    func attach(session: Session, app: BubblesAndCounterApp) {
        session.observe({ self.take(.session($0)) }, finished: { self.sourceEnded() })
        app.observe({ self.take(.app($0)) }, finished: { self.sourceEnded() })
    }

    /// Runs `body` on the hub's loop: at once when called there (as the session's events are), otherwise on its
    /// next turn.
    private func onLoop(_ body: @escaping @Sendable () -> Void) {
        if loop.inEventLoop {
            body()
        } else {
            loop.execute(body)
        }
    }

    /// Hands `event` on, on the hub's loop.
    func take(_ event: DaemonEvent) {
        onLoop { self.fanout.yield(event) }
    }

    /// Numbers `event`, keeps it in the history and writes it to every watcher, encoded once; while nobody watches,
    /// keeps it unencoded. On the loop.
    private func write(_ event: DaemonEvent) {
        let control = event.control
        let time = Date()
        let watchers = state.value.watchers
        guard !watchers.isEmpty, let line = encode(control, seq: state.value.history.nextSeq, at: time) else {
            state.value.history.append(.event(control, at: time))
            return
        }
        state.value.history.append(.line(line))
        for watcher in watchers.values { watcher.onLoop { $0.send(line) } }
    }

    /// The lines of a replay's events, numbered from its first; an event that cannot be written is left out.
    private func lines(of replay: EventHistory.Replay) -> [ByteBuffer] {
        zip(replay.firstSeq..., replay.entries).compactMap { seq, entry in
            switch entry {
            case .line(let line): line
            case .event(let event, let time): encode(event, seq: seq, at: time)
            }
        }
    }

    /// The line of `event`, with its number when it has one, its time, and its newline.
    private func encode(_ event: ControlEvent, seq: UInt64?, at time: Date) -> ByteBuffer? {
        guard let json = ControlDispatcher.encode(event, seq: seq, at: time, with: state.value.encoder) else {
            return nil
        }
        var line = ByteBuffer()
        line.reserveCapacity(json.count + 1)
        line.writeBytes(json)
        line.writeInteger(UInt8(0x0A))
        return line
    }

    /// Makes a `watch` connection's writer a watcher: the reply goes first (the run and the last event's number);
    /// then, with `since`, the events after it the history holds (after an `eventsMissed` line with the count of
    /// those it does not, or when `run` is not this run); then every event from now on, until `closed` (the client
    /// went) or the events end (then the hub closes the connection). The replay and the start of the live events
    /// are decided in one turn of the hub's loop: no event is missed or written twice between them.
    func watch(
        _ writer: NIOLoopBound<WatchWriter>, since: UInt64? = nil, run: String? = nil, closed: EventLoopFuture<Void>
    ) {
        onLoop {
            let history = self.state.value.history
            let reply = Result<ControlResult, ControlError>.success(
                .watching(WatchResult(run: history.run, seq: history.lastSeq)))
            let replay = history.replay(since: since, run: run)
            let notice = replay.missed.flatMap {
                self.encode(.eventsMissed(count: $0, restarted: replay.restarted), seq: nil, at: Date())
            }
            let lines = (notice.map { [$0] } ?? []) + self.lines(of: replay)
            writer.onLoop { $0.start(with: ByteBuffer(bytes: reply.replyLine + [0x0A]), then: lines) }
            guard !self.state.value.isEnded else {
                writer.onLoop { $0.finish() }
                return
            }
            self.state.value.nextID += 1
            let id = self.state.value.nextID
            self.state.value.watchers[id] = writer
            closed.whenComplete { _ in self.onLoop { self.state.value.watchers[id] = nil } }
        }
    }

    /// A new reader's stream of the events from now on, for a reader that takes its time (the pages' broadcast): it
    /// holds the oldest `bufferSize` unread events, and a reader that falls behind gets `eventsMissed` with how many
    /// it missed once it has room again. It ends when the events end.
    func subscribe(bufferSize: Int = EventHub.streamBuffer) -> AsyncStream<DaemonEvent> {
        fanout.subscribe(bufferSize: bufferSize)
    }

    /// The entries of its tables, by name (for tests and diagnostics): the `watch` connections, the lines waiting in
    /// their writers (of those on the hub's loop), the streams subscribed and the observers.
    func tableSizes() async -> [String: Int] {
        let fanout = self.fanout
        let sizes = try? await loop.submit { [state] in
            let watchers = state.value.watchers.values
            let waiting = watchers.reduce(0) { $0 + ($1.eventLoop.inEventLoop ? $1.value.waitingLines : 0) }
            return ["watchers": watchers.count, "watcherLines": waiting]
        }.get()
        return (sizes ?? [:]).merging(
            ["hubSubscribers": fanout.subscriberCount, "hubObservers": fanout.observerCount]) { $1 }
    }

    private func sourceEnded() {
        onLoop {
            self.state.value.sourcesOpen -= 1
            if self.state.value.sourcesOpen == 0 { self.end() }
        }
    }

    /// Ends the hub (the events ended, or the daemon stops without them): every watcher's connection is closed once
    /// what waits for it is written, and every stream ends.
    func end() {
        onLoop {
            guard !self.state.value.isEnded else { return }
            self.state.value.isEnded = true
            let watchers = self.state.value.watchers
            self.state.value.watchers = [:]
            for watcher in watchers.values { watcher.onLoop { $0.finish() } }
            self.fanout.finish()
            self.endPromise.succeed()
        }
    }
}
