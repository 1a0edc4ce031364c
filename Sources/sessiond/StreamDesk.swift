import Crypto
import Foundation
import LanSession
import Logging
import ServiceLifecycle
import SessionControl
import Synchronization

/// The byte streams peers open to this daemon: taken while a client listens (`streams`), each read to its end with
/// its byte count and SHA-256 and reported to every listener; declined while nobody listens (one that was opened as
/// the last listener left is cancelled). A `Service`: each stream is read (or cancelled) in a child task of its run,
/// and the session is told in order when listening starts and stops. A listener that does not read holds at most
/// ``maxWaitingReports``; one that falls further behind gets those, then its connection closes: it is never left
/// to guess that reports went missing.
final class StreamDesk: Service, Sendable {
    /// What the run takes, in order.
    private enum Arrival {
        case stream(IncomingByteStream)
        case listening(Bool)
    }

    private final class Listeners: Sendable {
        let continuations = Mutex<[Int: AsyncStream<StreamResult>.Continuation]>([:])
        let nextID = Mutex(0)
    }

    /// Reports waiting for a listener that does not read, at most.
    static let maxWaitingReports = 10_000

    private let listeners = Listeners()
    private let logger: Logger
    private let session: Session
    private let incoming: AsyncStream<Arrival>
    private let arrivals: AsyncStream<Arrival>.Continuation

    /// A desk for `session`, which should start with ``SessionConfiguration/acceptsByteStreams`` false.
    init(session: Session, logger: Logger) {
        self.session = session
        self.logger = logger
        (incoming, arrivals) = AsyncStream.makeStream()
    }

    /// Reads or cancels each stream handed over, each in a task of its own, until a graceful shutdown.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await arrival in incoming.cancelOnGracefulShutdown() {
                guard case .stream(let stream) = arrival else {
                    if case .listening(let on) = arrival { try? await session.acceptByteStreams(on) }
                    continue
                }
                guard listeners.continuations.withLock({ !$0.isEmpty }) else {
                    logger.debug("cancelling \(stream): no client takes byte streams")
                    group.addTask { await stream.cancel(reason: "no client takes byte streams here") }
                    continue
                }
                group.addTask { await self.read(stream) }
            }
        }
    }

    /// A new listener's reports, from now on: `opened`, then `finished` or `failed`, per stream. It ends when a
    /// report finds no room (the listener fell ``maxWaitingReports`` behind), after those that wait.
    func subscribe(bufferSize: Int = StreamDesk.maxWaitingReports) -> AsyncStream<StreamResult> {
        let id = listeners.nextID.withLock { id in
            id += 1
            return id
        }
        let (stream, continuation) = AsyncStream<StreamResult>.makeStream(bufferingPolicy: .bufferingOldest(bufferSize))
        let listeners = self.listeners
        let arrivals = self.arrivals
        continuation.onTermination = { _ in
            let last = listeners.continuations.withLock {
                $0.removeValue(forKey: id)
                return $0.isEmpty
            }
            if last { arrivals.yield(.listening(false)) }
        }
        let first = listeners.continuations.withLock {
            $0[id] = continuation
            return $0.count == 1
        }
        if first { arrivals.yield(.listening(true)) }
        return stream
    }

    /// The `streams` clients listening now.
    var listenerCount: Int { listeners.continuations.withLock { $0.count } }

    /// Takes a stream a peer opened: read to its end while a client listens, cancelled otherwise.
    func take(_ stream: IncomingByteStream) {
        arrivals.yield(.stream(stream))
    }

    private func read(_ stream: IncomingByteStream) async {
        var report = StreamResult(
            peerID: stream.peer.description, name: stream.name, id: stream.id, direction: "receiving",
            phase: "opened", bytes: 0)
        publish(report)
        let started = ContinuousClock.now
        var hash = SHA256()
        do {
            for try await chunk in stream {
                hash.update(data: chunk)
                report.bytes += UInt64(chunk.count)
            }
            report.phase = "finished"
            report.sha256 = hash.finalize().map { String(format: "%02x", $0) }.joined()
            report.seconds = Self.seconds(since: started)
            logger.debug("\(stream) finished: \(report.bytes) bytes")
        } catch let error as SessionError {
            report.phase = "failed"
            report.reason = error.message
        } catch {
            report.phase = "failed"
            report.reason = "\(error)"
        }
        publish(report)
    }

    /// Hands `report` to every listener; one with no room for it is ended instead of missing it unnoticed.
    func publish(_ report: StreamResult) {
        for continuation in listeners.continuations.withLock({ Array($0.values) }) {
            guard case .dropped = continuation.yield(report) else { continue }
            logger.debug("closing a streams listener: \(Self.maxWaitingReports) reports wait for it unread")
            continuation.finish()
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (seconds * 1000).rounded() / 1000
    }
}
