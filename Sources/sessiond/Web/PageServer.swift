import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import ServiceLifecycle
import SessionControl

/// The page for people (`sessiond --http`): HTTP/1 for its files and a WebSocket for its state, on SwiftNIO's own
/// modules. Every request needs the page token (docs/control-protocol.md, "The page"): on `/?token=…` the answer sets
/// it as a cookie; without it a request gets 401 and no state. The WebSocket also needs an `Origin` of this server.
/// As a `Service`, it serves until graceful shutdown, then closes its socket.
final class PageServer: Service {
    typealias HTTPConnection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
    typealias WebSocketConnection = NIOAsyncChannel<WebSocketFrame, WebSocketFrame>

    /// What a connection became.
    enum Accepted: Sendable {
        case webSocket(WebSocketConnection, NIOLoopBound<PageWriter>)
        /// A WebSocket without the token, from another origin, or not to `/ws`: closed at once with 1008.
        case refusedWebSocket(WebSocketConnection)
        case http(HTTPConnection)
    }

    /// Where it listens (the port the system chose when asked for 0).
    let address: SocketAddress
    private let server: NIOAsyncChannel<EventLoopFuture<Accepted>, Never>
    private let token: PageToken
    private let hosts: PageHosts
    private let broadcast: PageBroadcast
    private let logger: Logger

    private init(
        address: SocketAddress, server: NIOAsyncChannel<EventLoopFuture<Accepted>, Never>, token: PageToken,
        hosts: PageHosts, feed: PageFeed, logger: Logger
    ) {
        self.address = address
        self.server = server
        self.token = token
        self.hosts = hosts
        self.broadcast = PageBroadcast(feed: feed)
        self.logger = logger
    }

    /// Listens on `host:port`.
    static func bind(
        host: String, port: Int, token: PageToken, feed: PageFeed, logger: Logger
    ) async throws
        -> PageServer
    {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketServerUpgrader<Accepted>(
                        maxFrameSize: 1 << 16,
                        // Every upgrade is taken, and one that may not be is refused once it is a WebSocket (a
                        // close with 1008 before any state): an upgrader that declines loses the request here.
                        shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                        upgradePipelineHandler: { channel, head in
                            channel.eventLoop.makeCompletedFuture {
                                let writer = PageWriter()
                                try channel.pipeline.syncOperations.addHandlers(PageInboundBudget(), writer)
                                let connection = try WebSocketConnection(wrappingChannelSynchronously: channel)
                                let hosts = PageHosts(port: channel.localAddress?.port ?? port, boundHost: host)
                                return Self.mayUpgrade(head, token: token, hosts: hosts)
                                    ? .webSocket(connection, NIOLoopBound(writer, eventLoop: channel.eventLoop))
                                    : .refusedWebSocket(connection)
                            }
                        })
                    let configuration = NIOTypedHTTPServerUpgradeConfiguration<Accepted>(
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                .http(try HTTPConnection(wrappingChannelSynchronously: channel))
                            }
                        })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                        configuration: .init(upgradeConfiguration: configuration))
                }
            }
        guard let address = server.channel.localAddress, let port = address.port else {
            throw DaemonError("the page's socket has no address")
        }
        return PageServer(
            address: address, server: server, token: token, hosts: PageHosts(port: port, boundHost: host), feed: feed,
            logger: logger)
    }

    /// Serves connections until graceful shutdown or cancellation, then closes the socket.
    /// The pages open now (for tests and diagnostics).
    var pageCount: Int { broadcast.pageCount }

    func run() async {
        await cancelWhenGracefulShutdown { await self.accept() }
        await close()
    }

    /// Serves connections, and the pages' broadcast, until cancelled.
    private func accept() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.broadcast.run() }
            do {
                try await server.executeThenClose { inbound in
                    try await withThrowingDiscardingTaskGroup { group in
                        for try await accepted in inbound {
                            group.addTask { await self.serve(accepted) }
                        }
                    }
                }
            } catch {
                logger.debug("the page's socket closed: \(error)")
            }
            group.cancelAll()
        }
    }

    private func close() async {
        try? await server.channel.close()
    }

    private func serve(_ accepted: EventLoopFuture<Accepted>) async {
        do {
            switch try await accepted.get() {
            case .webSocket(let connection, let writer):
                try await PageConnection(connection: connection, writer: writer, broadcast: broadcast, logger: logger)
                    .run()
            case .refusedWebSocket(let connection):
                logger.debug("refused a page WebSocket: no token, another origin or host, or not /ws")
                try await connection.executeThenClose { _, outbound in
                    var reason = ByteBuffer()
                    reason.write(webSocketErrorCode: .policyViolation)
                    reason.writeString("the page's token, and a Host and an Origin of this server, are needed")
                    try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: reason))
                }
            case .http(let connection):
                try await serveHTTP(connection)
            }
        } catch {
            logger.debug("a page connection ended: \(error)")
        }
    }

    // MARK: - HTTP

    /// Whether a WebSocket request may be upgraded: to `/ws`, with the token, to a name of this server, from a page of
    /// this server.
    static func mayUpgrade(_ head: HTTPRequestHead, token: PageToken, hosts: PageHosts) -> Bool {
        let path = head.uri.split(separator: "?", maxSplits: 1).first ?? ""
        guard path == "/ws", authorised(head, token: token), hosts.allows(head.headers.first(name: "Host")) else {
            return false
        }
        guard let origin = head.headers.first(name: "Origin"), let host = head.headers.first(name: "Host") else {
            return false
        }
        return origin == "http://\(host)"
    }

    /// Whether `head` carries the token, by cookie or in its query.
    static func authorised(_ head: HTTPRequestHead, token: PageToken) -> Bool {
        token.matches(PageToken.fromCookies(head.headers["Cookie"])) || token.matches(PageToken.fromQuery(of: head.uri))
    }

    private func serveHTTP(_ connection: HTTPConnection) async throws {
        try await connection.executeThenClose { inbound, outbound in
            for try await part in inbound {
                guard case .head(let head) = part else { continue }
                let response = Self.respond(to: head, token: token, hosts: hosts)
                try await outbound.write(contentsOf: response)
                if !head.isKeepAlive { return }
            }
        }
    }

    /// The answer to a request for the page's files (GET and HEAD only).
    static func respond(to head: HTTPRequestHead, token: PageToken, hosts: PageHosts) -> [HTTPServerResponsePart] {
        var headers = HTTPHeaders()
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "Connection", value: head.isKeepAlive ? "keep-alive" : "close")
        func text(_ status: HTTPResponseStatus, _ body: String) -> [HTTPServerResponsePart] {
            var headers = headers
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            headers.add(name: "Content-Length", value: "\(body.utf8.count)")
            return [
                .head(HTTPResponseHead(version: head.version, status: status, headers: headers)),
                .body(.byteBuffer(ByteBuffer(string: body))), .end(nil),
            ]
        }
        guard head.method == .GET || head.method == .HEAD else {
            return text(.methodNotAllowed, "GET only\n")
        }
        guard hosts.allows(head.headers.first(name: "Host")) else {
            let host = head.headers.first(name: "Host") ?? "none"
            return text(
                .misdirectedRequest, "This page answers to this machine's names and addresses only (Host: \(host)).\n")
        }
        let path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "/")
        let name = path == "/" ? "index.html" : String(path.dropFirst())
        guard let asset = PageAssets.asset(named: name) else {
            return path == "/ws"
                ? text(.forbidden, "a WebSocket needs the page's token and an Origin of this server\n")
                : text(.notFound, "no \(path) here\n")
        }
        let byQuery = token.matches(PageToken.fromQuery(of: head.uri))
        guard byQuery || token.matches(PageToken.fromCookies(head.headers["Cookie"])) else {
            return text(
                .unauthorized,
                "This page needs its token: open the address that `session-client web` prints on this machine.\n")
        }
        if byQuery { headers.add(name: "Set-Cookie", value: token.setCookie) }
        headers.add(name: "Content-Type", value: asset.contentType)
        headers.add(name: "Content-Length", value: "\(asset.bytes.count)")
        headers.add(
            name: "Content-Security-Policy",
            value:
                "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'"
        )
        let body: [HTTPServerResponsePart] =
            head.method == .HEAD ? [] : [.body(.byteBuffer(ByteBuffer(bytes: asset.bytes)))]
        return [.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))] + body + [.end(nil)]
    }
}
