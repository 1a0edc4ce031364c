import LanSession
import NIOCore
import NIOEmbedded
import Testing

@testable import LanSessionLE

@Suite("L2CAPTransport")
struct L2CAPTransportTests {
    @Test("a PSM outside the dynamic LE range 0x80...0xFF is refused before any socket is opened")
    func psms() {
        #expect(throws: SessionError.self) { try L2CAPTransport(psm: 0x7F) }
        #expect(throws: SessionError.self) { try L2CAPTransport(psm: 0x100) }
        #expect(L2CAPTransport.psms.contains(L2CAPTransport.defaultPSM))
    }

    @Test(
        "the SDU writer cuts writes at the MTU and hands them on one SDU at a time, each write's promise with its last")
    func sduWriter() throws {
        let channel = EmbeddedChannel(handler: SDUWriter(mtu: 4))
        let first = channel.eventLoop.makePromise(of: Void.self)
        let second = channel.eventLoop.makePromise(of: Void.self)
        let empty = channel.eventLoop.makePromise(of: Void.self)
        channel.write(ByteBuffer(bytes: Array(0..<10)), promise: first)
        channel.write(ByteBuffer(), promise: empty)
        channel.write(ByteBuffer(bytes: [10, 11, 12]), promise: second)
        // Nothing goes before a flush.
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        channel.flush()
        var pieces: [[UInt8]] = []
        while let piece = try channel.readOutbound(as: ByteBuffer.self) { pieces.append(Array(buffer: piece)) }
        #expect(pieces == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9], [10, 11, 12]])
        let completed = Outcomes()
        for promise in [first, empty, second] { completed.record(promise.futureResult) }
        #expect(completed.values == [true, true, true])
        _ = try channel.finish()
    }

    @Test("the next SDU goes down only once the socket took the last: SwiftNIO never gathers two into one write")
    func oneAtATime() throws {
        let channel = EmbeddedChannel()
        let socket = HeldWrites()
        try channel.pipeline.syncOperations.addHandler(SDUWriter(mtu: 3))
        try channel.pipeline.syncOperations.addHandler(socket, position: .first)
        channel.writeAndFlush(ByteBuffer(bytes: Array(0..<8)), promise: nil)
        #expect(socket.pieces == [[0, 1, 2]])
        socket.complete()
        #expect(socket.pieces == [[0, 1, 2], [3, 4, 5]])
        socket.complete()
        socket.complete()
        #expect(socket.pieces == [[0, 1, 2], [3, 4, 5], [6, 7]])
        _ = try? channel.finish()
    }

    @Test("a close lingers until the peer closes or the linger passes, and drops what the peer sends meanwhile")
    func lingeringClose() throws {
        let channel = EmbeddedChannel(handler: SDUWriter(mtu: 8))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let closed = Outcomes()
        let close = channel.eventLoop.makePromise(of: Void.self)
        closed.record(close.futureResult)
        channel.close(promise: close)
        #expect(channel.isActive && closed.values.isEmpty)
        try channel.writeInbound(ByteBuffer(bytes: [1, 2, 3]))
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
        channel.embeddedEventLoop.advanceTime(by: SDUWriter.linger - .milliseconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive && closed.values == [true])
    }

    @Test("a write that fails fails the pieces queued behind it, and every later write")
    func failure() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(SDUWriter(mtu: 2))
        try channel.pipeline.syncOperations.addHandler(FailingWrites(), position: .first)
        let outcomes = Outcomes()
        let queued = channel.eventLoop.makePromise(of: Void.self)
        outcomes.record(queued.futureResult)
        channel.writeAndFlush(ByteBuffer(bytes: [1, 2, 3, 4, 5]), promise: queued)
        let later = channel.eventLoop.makePromise(of: Void.self)
        outcomes.record(later.futureResult)
        channel.writeAndFlush(ByteBuffer(bytes: [6]), promise: later)
        #expect(outcomes.values == [false, false])
        _ = try? channel.finish()
    }

    /// Whether futures of an `EmbeddedChannel` succeeded (true) or failed (false), in the order they completed.
    final class Outcomes: @unchecked Sendable {
        private(set) var values: [Bool] = []
        func record(_ future: EventLoopFuture<Void>) {
            future.whenComplete { result in
                if case .success = result { self.values.append(true) } else { self.values.append(false) }
            }
        }
    }

    /// Keeps each write's promise until told, as a socket that has not taken the bytes yet.
    final class HeldWrites: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = ByteBuffer
        private(set) var pieces: [[UInt8]] = []
        private var held: [EventLoopPromise<Void>] = []
        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            pieces.append(Array(buffer: unwrapOutboundIn(data)))
            if let promise { held.append(promise) }
        }
        func complete() {
            guard !held.isEmpty else { return }
            held.removeFirst().succeed()
        }
    }

    /// Fails every write, as a socket that refuses an SDU (EMSGSIZE) would.
    final class FailingWrites: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        struct Refused: Error {}
        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            promise?.fail(Refused())
        }
    }
}
