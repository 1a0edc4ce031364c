import Foundation
import LanSession
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SessionControl
import Synchronization

/// The control socket: a Unix stream socket speaking JSON lines (docs/control-protocol.md).
///
/// Each connection is served on its own, request after request; a malformed request closes that connection only,
/// with the reason logged. A request that can be answered at once (an `increment` whose count saves in place) is
/// answered on the event loop by the connection's `ControlRequestHandler`; the others by the connection's task. A
/// `watch` connection is written by the `EventHub` through its `WatchWriter`, on the loop. As a `Service`, it serves
/// until graceful shutdown, then closes the socket and removes its file.
final class ControlServer: Service {
    typealias Connection = NIOAsyncChannel<ControlInput, ByteBuffer>

    /// A connection: its channel as its task reads it, and its handlers on the loop.
    struct Accepted: Sendable {
        let connection: Connection
        let requests: NIOLoopBound<ControlRequestHandler>
        let watch: NIOLoopBound<WatchWriter>
    }

    let path: String
    private let server: NIOAsyncChannel<Accepted, Never>
    private let dispatcher: ControlDispatcher
    private let logger: Logger
    private let connections = Atomic<Int>(0)

    /// The connections served now (for tests and diagnostics).
    var connectionCount: Int { connections.load(ordering: .relaxed) }

    private init(
        path: String, server: NIOAsyncChannel<Accepted, Never>, dispatcher: ControlDispatcher, logger: Logger
    ) {
        self.path = path
        self.server = server
        self.dispatcher = dispatcher
        self.logger = logger
    }

    /// Binds the socket at `path` with mode 0600, refusing to take over a socket another daemon still serves.
    static func bind(path: String, dispatcher: ControlDispatcher, logger: Logger) async throws -> ControlServer {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try checkUnused(path: path)
        let previousMask = umask(0o177)  // the socket file is created 0600
        defer { umask(previousMask) }
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let watch = WatchWriter { missed in
                        var line = ControlDispatcher.encode(.session(.eventsMissed(missed))) ?? Data()
                        line.append(0x0A)
                        return ByteBuffer(bytes: line)
                    }
                    let requests = ControlRequestHandler(answerNow: dispatcher.handleNow)
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(ControlLineDecoder()), watch, requests)
                    return Accepted(
                        connection: try Connection(wrappingChannelSynchronously: channel),
                        requests: NIOLoopBound(requests, eventLoop: channel.eventLoop),
                        watch: NIOLoopBound(watch, eventLoop: channel.eventLoop))
                }
            }
        chmod(path, 0o600)
        return ControlServer(path: path, server: server, dispatcher: dispatcher, logger: logger)
    }

    /// Throws when a daemon answers on `path`; a socket file nobody listens on is fine (``bind`` replaces it).
    static func checkUnused(path: String) throws(DaemonError) {
        guard FileManager.default.fileExists(atPath: path), (try? ControlClient(path: path)) != nil else { return }
        throw DaemonError("another sessiond already serves the control socket \(path)")
    }

    /// Serves connections until graceful shutdown or cancellation, then closes the socket and removes its file.
    func run() async {
        await cancelWhenGracefulShutdown { await self.accept() }
        await close()
    }

    /// Serves connections until cancelled, then closes the socket and removes its file.
    private func accept() async {
        do {
            try await server.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await accepted in inbound {
                        group.addTask { await self.serve(accepted) }
                    }
                }
            }
        } catch is CancellationError {
        } catch {
            logger.error("control socket: \(error)")
        }
        unlink(path)
    }

    /// Closes the socket and removes its file.
    private func close() async {
        try? await server.channel.close()
        unlink(path)
    }

    private func serve(_ accepted: Accepted) async {
        connections.add(1, ordering: .relaxed)
        defer { connections.subtract(1, ordering: .relaxed) }
        let connection = accepted.connection
        do {
            try await connection.executeThenClose { inbound, outbound in
                for try await input in inbound {
                    let command: ControlCommand
                    switch input {
                    case .command(let decoded):
                        command = decoded
                    case .refused(let error):
                        try await outbound.write(Self.line(.failure(error)))
                        accepted.requests.answered()
                        continue
                    case .malformed(let line):
                        logger.warning("dropping a control client: not a request: \(Self.describe(line))")
                        return
                    }
                    switch command {
                    case .push(let path, let peer, let name):
                        try await push(path, to: peer, named: name, outbound: outbound)
                        accepted.requests.answered()
                    case .watch(let since, let run):
                        try await watch(accepted.watch, since: since, run: run, channel: connection.channel)
                        return
                    case .streams:
                        // Subscribed before the reply: a stream opened once the client has read it is its.
                        let reports = dispatcher.desk.subscribe()
                        try await outbound.write(Self.line(.success(.subscribed)))
                        try await listen(reports, outbound: outbound, until: connection.channel.closeFuture)
                        return
                    default:
                        try await outbound.write(Self.line(await dispatcher.handle(command)))
                        accepted.requests.answered()
                    }
                }
            }
        } catch let error as ControlLineDecoder.LineTooLong {
            logger.warning("dropping a control client: \(error)")
        } catch {
            logger.debug("control client gone: \(error)")
        }
    }

    /// Sends a file to a peer: a progress line at most every 100 ms, then the result. A client that goes away
    /// cancels the transfer (its next progress line cannot be written).
    private func push(
        _ path: String, to wanted: String, named name: String?, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) async throws {
        let peer: PeerInfo
        do {
            peer = try await dispatcher.member(named: wanted)
        } catch let error as SessionError {
            try await outbound.write(Self.line(.failure(ControlError(error.message))))
            return
        }
        let session = dispatcher.session
        // Progress is a state (the bytes so far), not an event: for a client that reads slower than it comes, older
        // steps give way to newer ones. The final result does not go through here and is never lost.
        let (progress, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Result<ControlResult, ControlError>.self) { group in
            group.addTask {
                defer { continuation.finish() }
                do {
                    let final = try await session.sendResource(at: path, named: name, to: peer.peerID) {
                        continuation.yield($0)
                    }
                    let elapsed = ContinuousClock.now - started
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    return .success(.transfer(ControlDispatcher.result(final, seconds: seconds)))
                } catch let error as SessionError {
                    return .failure(ControlError(error.message))
                } catch {
                    return .failure(ControlError("\(error)"))
                }
            }
            for await update in progress where !update.phase.isFinal {
                try await outbound.write(Self.line(.success(.transfer(ControlDispatcher.result(update)))))
            }
            if let last = try await group.next() { try await outbound.write(Self.line(last)) }
        }
    }

    /// Makes the connection a watcher: the reply, then the events after `since` the hub's history holds, then the
    /// events, written by the hub on the loop as they happen, until the client goes away or the session ends (the hub
    /// closes the connection then); cancelled, closes it.
    private func watch(
        _ writer: NIOLoopBound<WatchWriter>, since: UInt64?, run: String?, channel: any Channel
    ) async throws {
        dispatcher.hub.watch(writer, since: since, run: run, closed: channel.closeFuture)
        try await withTaskCancellationHandler {
            try await channel.closeFuture.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    /// Reports the byte streams the daemon takes while this client listens, until the client goes away (then the
    /// daemon stops taking streams for it at once, not at its next report).
    private func listen(
        _ reports: AsyncStream<StreamResult>, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        until closed: EventLoopFuture<Void>
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await report in reports {
                    guard let line = try? JSONEncoder().encode(report) else { continue }
                    try await outbound.write(ByteBuffer(bytes: line + [0x0A]))
                }
            }
            group.addTask { try? await closed.get() }
            try await group.next()
            group.cancelAll()  // ends the subscription
        }
    }

    /// A reply's line, with its newline.
    private static func line(_ reply: Result<ControlResult, ControlError>) -> ByteBuffer {
        ByteBuffer(bytes: reply.replyLine + [0x0A])
    }

    private static func describe(_ line: ByteBuffer) -> String {
        let bytes = Array(line.readableBytesView.prefix(60))
        let text = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
        return "\(line.readableBytes) bytes starting \(text.debugDescription)"
    }
}

/// A daemon-level failure with a message for people.
struct DaemonError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
