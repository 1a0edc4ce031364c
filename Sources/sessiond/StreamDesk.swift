import Crypto
import Foundation
import LanSession
import Logging
import SessionControl
import Synchronization

/// The byte streams peers open to this daemon: taken while a client listens (`streams`), each read to its end with
/// its byte count and SHA-256 and reported to every listener; cancelled at once while nobody listens.
final class StreamDesk: Sendable {
    private final class Listeners: Sendable {
        let continuations = Mutex<[Int: AsyncStream<StreamResult>.Continuation]>([:])
        let nextID = Mutex(0)
    }

    private let listeners = Listeners()
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// A new listener's reports, from now on: `opened`, then `finished` or `failed`, per stream.
    func subscribe() -> AsyncStream<StreamResult> {
        let id = listeners.nextID.withLock { id in
            id += 1
            return id
        }
        let (stream, continuation) = AsyncStream<StreamResult>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let listeners = self.listeners
        continuation.onTermination = { _ in _ = listeners.continuations.withLock { $0.removeValue(forKey: id) } }
        listeners.continuations.withLock { $0[id] = continuation }
        return stream
    }

    /// Takes a stream a peer opened: reads it to its end while a client listens, cancels it otherwise.
    func take(_ stream: IncomingByteStream) {
        guard listeners.continuations.withLock({ !$0.isEmpty }) else {
            logger.debug("cancelling \(stream): no client takes byte streams")
            Task { await stream.cancel(reason: "no client takes byte streams here") }
            return
        }
        Task { await read(stream) }
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

    private func publish(_ report: StreamResult) {
        for continuation in listeners.continuations.withLock({ Array($0.values) }) { continuation.yield(report) }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (seconds * 1000).rounded() / 1000
    }
}
