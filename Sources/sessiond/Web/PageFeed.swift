import BubblesAndCounter
import Foundation
import LanSession
import SessionControl

/// What the page shows and may do, from the daemon's own answers: the same results as the control socket's (so that
/// the page and `session-client` always agree), its events, and the operations it asks for.
struct PageFeed: Sendable {
    let dispatcher: ControlDispatcher
    let hub: EventHub

    /// Everything the page shows now.
    func snapshot() async -> PageSnapshot {
        let status = try? await dispatcher.status()
        return PageSnapshot(
            this: PageSelf(
                peerID: status?.peerID ?? "", name: status?.name ?? "", fingerprint: status?.fingerprint ?? "",
                admission: status?.admission ?? ""),
            layout: await layout(), bubbles: await bubbles(),
            counter: await counter() ?? CounterResult(local: 0, peers: [:], total: 0),
            peers: await peers(), pairings: await pairings())
    }

    func bubbles() async -> [BubbleResult] { (try? await dispatcher.bubbles()) ?? [] }
    func counter() async -> CounterResult? { try? await dispatcher.counter() }
    func peers() async -> [PeerResult] { (try? await dispatcher.peers()) ?? [] }
    func pairings() async -> [PairingResult] { (try? await dispatcher.pairings()) ?? [] }

    func layout() async -> [PageLayoutEntry] {
        guard let layout = try? await dispatcher.app.layout() else { return [] }
        return layout.indexes.map { PageLayoutEntry(peerID: $0.key.description, playerIndex: $0.value) }
            .sorted { $0.playerIndex < $1.playerIndex }
    }

    /// The round trip of every link of every connected peer.
    func roundTrips() async -> [PageRTTSample] {
        await peers().flatMap { peer in
            peer.links.compactMap { link in
                link.rttMicros.map {
                    PageRTTSample(peerID: peer.peerID, transport: link.transport, rttMicros: $0)
                }
            }
        }
    }

    /// The messages an event of the daemon makes for the pages.
    func changes(after event: DaemonEvent) async -> [PageMessage] {
        switch event {
        case .app(.move(let view, let x, let y, let peer)):
            return [.bubble(BubbleResult(view: Int(view), holder: peer.description, x: Double(x), y: Double(y)))]
        case .app(.drop(let view, let x, let y, _)):
            return [.bubble(BubbleResult(view: Int(view), holder: nil, x: Double(x), y: Double(y)))]
        case .app(.holder(let view, _)):
            let bubbles = await bubbles()
            return bubbles.indices.contains(Int(view)) ? [.bubble(bubbles[Int(view)])] : []
        case .app(.counter):
            return await counter().map { [.counter($0)] } ?? []
        case .app(.layout):
            return [.layout(await layout()), .peers(await peers())]
        case .app:
            return []
        case .session(.eventsMissed):
            // The pages' broadcast fell behind: what the pages show, afresh.
            let counter = await counter().map { [PageMessage.counter($0)] } ?? []
            return [.layout(await layout()), .peers(await peers()), .pairings(await pairings())] + counter
                + (await bubbles()).map { .bubble($0) }
        case .session(.pairingRequested), .session(.paired), .session(.pairingEnded), .session(.introduced),
            .session(.unpaired):
            return [.pairings(await pairings()), .peers(await peers())]
        case .session(.peerConnected), .session(.peerLost), .session(.peerLeft), .session(.peerChanged),
            .session(.linkChanged):
            return [.peers(await peers())]
        case .session:
            return []
        }
    }

    /// Carries out what the page asked; nil when done, otherwise why not.
    func perform(_ operation: PageOperation) async -> String? {
        let command: ControlCommand
        switch operation.op {
        case "move":
            // A drag sends one a frame: straight to the app, without a control reply made.
            guard let view = operation.view, view >= 0, BubbleBoard.isValid(UInt8(clamping: view)),
                let x = operation.x, let y = operation.y
            else { return "move needs a bubble (0, 1, 2), x and y" }
            do {
                try await dispatcher.app.move(UInt8(view), x: Float(x), y: Float(y))
                return nil
            } catch {
                return error.message
            }
        case "pickup", "drop":
            guard let view = operation.view else { return "\(operation.op) needs a view" }
            command = operation.op == "pickup" ? .pickUp(view: view) : .drop(view: view, x: operation.x, y: operation.y)
        case "increment":
            command = .increment(count: 1)
        case "pair", "reject":
            guard let text = operation.peer, let peer = ControlCommand.peerID(hex: text) else {
                let name = operation.op == "pair" ? "pair" : "unpair"
                return "\(name) needs a peer id (16 hex digits), got \(operation.peer ?? "none")"
            }
            command = operation.op == "pair" ? .pair(peer: peer, code: operation.code) : .unpair(peer: peer)
        default:
            return "unknown operation \(operation.op)"
        }
        switch await dispatcher.handle(command) {
        case .success: return nil
        case .failure(let error): return error.message
        }
    }
}
