import NIOCore
import NIOPosix
import Testing

@testable import LanSession

#if canImport(Glibc)
    import Glibc
#endif

@Suite("LANTransport's sockets")
struct LANTransportTests {
    /// Options at the socket level that need a privilege (SO_DEBUG needs CAP_NET_ADMIN) fail for a daemon that runs as
    /// a user of its own: TCP_NODELAY must be set at the TCP level, on both ends, and nothing privileged at all.
    @Test("dialled and accepted sockets have TCP_NODELAY and no option that needs a privilege (SO_DEBUG)")
    func socketOptions() async throws {
        let transport = LANTransport()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let accepted = loop.makePromise(of: (any Channel).self)
        let (listener, port) = try await transport.listen(host: "127.0.0.1", port: 0, on: loop) { channel in
            accepted.succeed(channel)
            return channel.eventLoop.makeSucceededVoidFuture()
        }.get()
        let dialled = try await transport.connect(
            to: Endpoint(host: "127.0.0.1", port: port), on: loop
        ) { channel in channel.eventLoop.makeSucceededVoidFuture() }.get()
        let incoming = try await accepted.futureResult.get()
        for channel in [dialled, incoming] {
            let noDelay = try await channel.getOption(.tcpOption(.tcp_nodelay)).get()
            let debug = try await channel.getOption(.socket(SocketOptionLevel(SOL_SOCKET), SO_DEBUG)).get()
            #expect(noDelay != 0)
            #expect(debug == 0)
        }
        try await dialled.close()
        try await listener.close()
    }
}
