import BubblesAndCounter
import Foundation
import LanSession
import Logging
import NIOCore
import NIOWebSocket
import SessionControl
import Synchronization

/// One open page: its snapshot first, then every change as it happens (pushed, never polled), the round trips once a
/// second while a peer is connected, and the operations it asks for. All its frames leave through one writer task.
struct PageConnection {
    let connection: PageServer.WebSocketConnection
    let feed: PageFeed
    let logger: Logger

    func run() async throws {
        let events = feed.hub.subscribe()  // before the snapshot: what changes meanwhile follows it
        let ownMoves = OwnMoves()
        try await connection.executeThenClose { inbound, outbound in
            let (messages, sink) = AsyncStream<PageMessage>.makeStream(bufferingPolicy: .bufferingNewest(4096))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    let encoder = JSONEncoder()
                    for await message in messages {
                        let text = try encoder.encode(message)
                        try await outbound.write(
                            WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: text)))
                    }
                }
                sink.yield(.snapshot(await feed.snapshot()))
                group.addTask {
                    for await event in events {
                        // This page's own move comes back as an event: it is already where the page put it.
                        if case .app(.move(let view, let x, let y, let peer)) = event,
                            peer == feed.dispatcher.session.peerID, ownMoves.isEcho(view, x, y)
                        {
                            continue
                        }
                        for message in await changes(after: event) { sink.yield(message) }
                    }
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: .seconds(1))
                        let samples = await feed.roundTrips()
                        guard !samples.isEmpty else { continue }
                        sink.yield(.rtt(at: Int64(Date().timeIntervalSince1970 * 1000), samples: samples))
                    }
                }
                group.addTask {
                    for try await frame in inbound {
                        switch frame.opcode {
                        case .text, .binary:
                            guard let operation = PageOperation(frame) else {
                                sink.yield(.error("not an operation"))
                                continue
                            }
                            if operation.op == "move" { ownMoves.sent(operation) }
                            if let refusal = await feed.perform(operation) { sink.yield(.error(refusal)) }
                        case .ping:
                            try await outbound.write(
                                WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
                        case .connectionClose:
                            return
                        default:
                            continue
                        }
                    }
                }
                try await group.next()  // the page went away (or its socket failed)
                sink.finish()
                group.cancelAll()
            }
        }
    }

    /// The messages an event of the daemon makes for the page.
    private func changes(after event: DaemonEvent) async -> [PageMessage] {
        switch event {
        case .app(.move(let view, let x, let y, let peer)):
            return [.bubble(BubbleResult(view: Int(view), holder: peer.description, x: Double(x), y: Double(y)))]
        case .app(.drop(let view, let x, let y, _)):
            return [.bubble(BubbleResult(view: Int(view), holder: nil, x: Double(x), y: Double(y)))]
        case .app(.holder(let view, _)):
            let bubbles = await feed.bubbles()
            return bubbles.indices.contains(Int(view)) ? [.bubble(bubbles[Int(view)])] : []
        case .app(.counter):
            return await feed.counter().map { [.counter($0)] } ?? []
        case .app(.layout):
            return [.layout(await feed.layout()), .peers(await feed.peers())]
        case .app:
            return []
        case .session(.pairingRequested), .session(.paired), .session(.pairingEnded), .session(.introduced),
            .session(.unpaired):
            return [.pairings(await feed.pairings()), .peers(await feed.peers())]
        case .session(.peerConnected), .session(.peerLost), .session(.peerLeft), .session(.peerChanged),
            .session(.linkChanged):
            return [.peers(await feed.peers())]
        case .session:
            return []
        }
    }
}

/// The last move this page sent per bubble, so that its echo from the app is not sent back to it; any other change
/// of the bubble (another device's move, a drop) still is.
private final class OwnMoves: Sendable {
    private let last = Mutex<[UInt8: (Float, Float)]>([:])

    func sent(_ operation: PageOperation) {
        guard let view = operation.view, let x = operation.x, let y = operation.y, (0...255).contains(view) else {
            return
        }
        last.withLock { $0[UInt8(view)] = (Float(x), Float(y)) }
    }

    func isEcho(_ view: UInt8, _ x: Float, _ y: Float) -> Bool {
        last.withLock { last in
            guard let mine = last[view], mine == (x, y) else { return false }
            last[view] = nil
            return true
        }
    }
}
