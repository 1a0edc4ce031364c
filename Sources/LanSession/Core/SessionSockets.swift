import Logging
import NIOCore

/// What the session's sockets need from the session.
protocol SessionSocketsDelegate: AnyObject {
    /// Sets up the pipeline of a stream channel `transport` accepted, before it is active.
    func accepted(_ channel: any Channel, on transport: any Transport) -> EventLoopFuture<Void>
    /// An accept failed for want of descriptors.
    func descriptorsExhausted()
    /// Whether the session runs: a datagram socket that closes is opened again only then.
    var socketsWanted: Bool { get }
    /// The datagram socket could not be opened; the session works without it.
    func datagramsUnavailable(_ notice: SessionNotice)
}

/// The session's sockets: each transport's listener, and the datagram socket on the port of the transport that
/// carries datagrams (LAN). Without a datagram socket the session still works: unreliable messages use the reliable
/// link. A datagram socket that closes while the session runs (the system refused a send, say) is opened again a
/// moment later; meanwhile the probes go unanswered and the routes fall back to the links.
final class SessionSockets {
    private let loop: any EventLoop
    private let logger: Logger
    private let host: String
    private let transports: [any Transport]
    private let datagrams: DatagramRouter
    weak var delegate: (any SessionSocketsDelegate)?
    /// The port of the transport that listens on the session's port (LAN), 0 before the start.
    private(set) var port = 0
    /// The listening channel of each transport, by name.
    private var listeners: [String: any Channel] = [:]

    init(loop: any EventLoop, logger: Logger, host: String, transports: [any Transport], datagrams: DatagramRouter) {
        self.loop = loop
        self.logger = logger
        self.host = host
        self.transports = transports
        self.datagrams = datagrams
    }

    /// Where the session accepts links, one endpoint per listening transport.
    var endpoints: [Endpoint] {
        transports.compactMap { transport in
            listeners[transport.name].flatMap { transport.localEndpoint(of: $0, port: port) }
        }
    }

    /// Listens on every transport (the LAN one on `port`), and opens the datagram socket when `withDatagrams`; when a
    /// transport cannot listen, closes what opened.
    func open(port: Int, withDatagrams: Bool) -> EventLoopFuture<Void> {
        let bound = NIOLoopBound(self, eventLoop: loop)
        var listening: [EventLoopFuture<Void>] = []
        for transport in transports {
            let listened = transport.listen(host: host, port: port, on: loop) { channel in
                guard let delegate = bound.value.delegate else { return channel.eventLoop.makeSucceededVoidFuture() }
                return delegate.accepted(channel, on: transport)
            }
            .flatMap { (channel, port) -> EventLoopFuture<Void> in
                let sockets = bound.value
                sockets.listeners[transport.name] = channel
                do {
                    try channel.pipeline.syncOperations.addHandler(
                        ListenerGuard { bound.value.delegate?.descriptorsExhausted() }, position: .first)
                } catch {
                    return sockets.loop.makeFailedFuture(error)
                }
                guard transport.carriesDatagrams else { return sockets.loop.makeSucceededVoidFuture() }
                sockets.port = port
                guard withDatagrams else { return sockets.loop.makeSucceededVoidFuture() }
                return sockets.openDatagrams(on: transport, port: port)
            }
            listening.append(listened)
        }
        return EventLoopFuture.whenAllSucceed(listening, on: loop).flatMapError { error in
            let sockets = bound.value
            for listener in sockets.listeners.values { listener.close(promise: nil) }
            sockets.datagrams.channel?.close(promise: nil)
            return sockets.loop.makeFailedFuture(error)
        }
        .map { _ in }
    }

    /// Closes every socket; the futures of their closes.
    func close() -> [EventLoopFuture<Void>] {
        var closing: [EventLoopFuture<Void>] = []
        for listener in listeners.values { closing.append(listener.close().recover { _ in }) }
        if let channel = datagrams.channel { closing.append(channel.close().recover { _ in }) }
        return closing
    }

    /// Opens the datagram socket on `port`.
    private func openDatagrams(on transport: any Transport, port: Int) -> EventLoopFuture<Void> {
        let bound = NIOLoopBound(self, eventLoop: loop)
        return transport.openDatagrams(host: host, port: port, on: loop) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(DatagramHandler(router: bound.value.datagrams))
            }
        }
        .map { channel in
            bound.value.datagrams.socket(channel)
            channel.closeFuture.whenComplete { _ in bound.value.datagramSocketClosed(channel, transport: transport) }
        }
        .flatMapError { error in
            let notice = SessionNotice.datagramsUnavailable(port: port, reason: "\(error)")
            bound.value.logger.debug("\(notice)")
            bound.value.delegate?.datagramsUnavailable(notice)
            return bound.value.loop.makeSucceededVoidFuture()
        }
    }

    /// The datagram socket closed: while the session runs, it is opened again a moment later.
    private func datagramSocketClosed(_ channel: any Channel, transport: any Transport) {
        guard datagrams.channel === channel else { return }
        datagrams.socket(nil)
        guard delegate?.socketsWanted == true else { return }
        logger.debug("the datagram socket closed; opening it again")
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(in: .milliseconds(200)) {
            let sockets = bound.value
            guard sockets.delegate?.socketsWanted == true, sockets.datagrams.channel == nil else { return }
            _ = sockets.openDatagrams(on: transport, port: sockets.port)
        }
    }
}
