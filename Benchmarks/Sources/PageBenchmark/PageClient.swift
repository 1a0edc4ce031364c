import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A page of the daemon as the benchmark opens it: a WebSocket to `/ws` with the page's token, the frames it gets
/// handed to `handler` on the connection's loop.
enum PageClient {
    /// Where the page is, from the address `session-client web` prints.
    struct Address: Sendable {
        var host: String
        var port: Int
        var token: String

        /// From `http://HOST:PORT/?token=TOKEN`.
        init?(url: String) {
            guard let parts = URLComponents(string: url), parts.scheme == "http", let host = parts.host,
                let port = parts.port, let token = parts.queryItems?.first(where: { $0.name == "token" })?.value
            else { return nil }
            self.host = host
            self.port = port
            self.token = token
        }
    }

    /// Opens a page; `handler` is in its pipeline once the WebSocket is up.
    static func open(
        _ address: Address, group: any EventLoopGroup, handler: @escaping @Sendable () -> any ChannelHandler
    ) async throws -> any Channel {
        let upgraded = try await ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connect(host: address.host, port: address.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<Bool>(
                        maxFrameSize: 1 << 20,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(handler())
                                return true
                            }
                        })
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "\(address.host):\(address.port)")
                    headers.add(name: "Origin", value: "http://\(address.host):\(address.port)")
                    headers.add(name: "Cookie", value: "lansession-page=\(address.token)")
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/ws", headers: headers)
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<Bool>(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(false) })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: configuration)
                    ).map { upgraded in (channel, upgraded) }
                }
            }
        let (channel, ok) = try await upgraded.get()
        guard ok else {
            try? await channel.close()
            throw BenchError("the page's WebSocket was refused (token, Host or Origin)")
        }
        return channel
    }

    /// A text frame from the page, masked as a client's must be.
    static func text(_ string: String) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: string))
    }

    /// A binary move (docs/control-protocol.md, "The page"): code 1, the bubble, x and y as big-endian float32.
    static func move(_ view: UInt8, x: Float, y: Float) -> WebSocketFrame {
        var data = ByteBuffer()
        data.writeInteger(UInt8(1))
        data.writeInteger(view)
        data.writeInteger(x.bitPattern)
        data.writeInteger(y.bitPattern)
        return WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: data)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
