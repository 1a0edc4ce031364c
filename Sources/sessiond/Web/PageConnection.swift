import BubblesAndCounter
import Foundation
import LanSession
import Logging
import NIOCore
import NIOWebSocket
import SessionControl

/// One open page: its snapshot first, then every change as it happens (pushed, never polled), the round trips once a
/// second while a peer is connected, and the operations it asks for. All its frames leave through one writer task.
struct PageConnection {
    let connection: PageServer.WebSocketConnection
    let feed: PageFeed
    let logger: Logger

    func run() async throws {
        let events = feed.hub.subscribe()  // before the snapshot: what changes meanwhile follows it
        let drags = PageDrags()
        let me = feed.dispatcher.session.peerID
        try await connection.executeThenClose { inbound, outbound in
            // Coalesced per page: a page that reads slowly or not at all holds one message per thing it shows.
            let sink = PageOutbox()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    let encoder = JSONEncoder()
                    while let messages = await sink.next() {
                        let frames = try messages.map { message in
                            WebSocketFrame(
                                fin: true, opcode: .text, data: ByteBuffer(bytes: try encoder.encode(message)))
                        }
                        try await outbound.write(contentsOf: frames)
                    }
                }
                sink.post(.snapshot(await feed.snapshot()))
                group.addTask {
                    for await event in events {
                        switch event {
                        case .app(.move(let view, let x, let y, let peer)) where peer == me:
                            // This page's own move comes back as an event: it is already where the page put it.
                            if drags.isEcho(view, x, y) { continue }
                        case .app(.holder(let view, let holder)):
                            // A pick-up of this page answered: a move that waited for it goes now.
                            if let move = drags.holder(of: view, isThisDevice: holder.map { $0 == me }),
                                let refusal = await feed.perform(move)
                            {
                                sink.post(.error(refusal))
                            }
                        default:
                            break
                        }
                        for message in await changes(after: event) { sink.post(message) }
                    }
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: .seconds(1))
                        let samples = await feed.roundTrips()
                        guard !samples.isEmpty else { continue }
                        sink.post(.rtt(at: Int64(Date().timeIntervalSince1970 * 1000), samples: samples))
                    }
                }
                group.addTask {
                    var rules = PageFrameRules()
                    for try await received in inbound {
                        let frame: WebSocketFrame
                        switch rules.accept(received) {
                        case .message(let message), .control(let message):
                            frame = message
                        case .partial:
                            continue
                        case .fail(let code, let reason):
                            logger.debug("failing a page's WebSocket: \(reason)")
                            var data = ByteBuffer()
                            data.write(webSocketErrorCode: code)
                            data.writeString(reason)
                            try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
                            return
                        }
                        switch frame.opcode {
                        case .text, .binary:
                            guard let operation = PageOperation(frame) else {
                                sink.post(.error("not an operation"))
                                continue
                            }
                            switch operation.op {
                            case "pickup": drags.askedFor(operation)
                            case "move": if drags.holdsBack(operation) { continue }
                            case "drop": drags.forget(operation)
                            default: break
                            }
                            if let refusal = await feed.perform(operation) {
                                if operation.op == "pickup" { drags.forget(operation) }
                                sink.post(.error(refusal))
                            }
                        case .ping:
                            try await outbound.write(
                                WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
                        case .connectionClose:
                            // Answered with a close of its own (RFC 6455 5.5.1), then the connection ends.
                            var data = ByteBuffer()
                            data.write(webSocketErrorCode: .normalClosure)
                            try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
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
