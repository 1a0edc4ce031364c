import BubblesAndCounter
import LanSession
import LanSessionLE
import LanSessionRFCOMM
import Logging
import NIOCore
import ServiceLifecycle

/// The LE GATT face of the daemon's apps (docs/wire-format.md 4.2): what a central writes goes to the counter and
/// the bubbles as if this device's user had done it; the apps' moves, holders and counts go to subscribed centrals.
///
/// The face hands each command over on the loop without waiting; this service carries them out in order.
struct GATTService: Service {
    let face: GATTFace
    let commands: AsyncStream<GATTCommand>
    let app: BubblesAndCounterApp
    let loop: any EventLoop
    let logger: Logger

    init(
        adapter: RFCOMMTransport.Adapter, session: Session, app: BubblesAndCounterApp, loop: any EventLoop,
        logger: Logger
    ) {
        let (commands, continuation) = AsyncStream.makeStream(
            of: GATTCommand.self, bufferingPolicy: .bufferingNewest(GATTFace.maxPendingNotifications))
        let configuration = session.configuration
        face = GATTFace(
            adapter: adapter,
            identity: GATTFace.identityText(
                peer: session.peerID, name: configuration.displayName, session: configuration.sessionName,
                fingerprint: configuration.isInsecure ? nil : session.fingerprint),
            deviceName: configuration.displayName, logger: logger
        ) { continuation.yield($0) }
        self.commands = commands
        self.app = app
        self.loop = loop
        self.logger = logger
    }

    func run() async throws {
        do {
            try await face.start(on: loop)
            logger.info("GATT face on \(face.adapter.name) (\(face.adapter.address)): service \(GATTFace.serviceUUID)")
        } catch {
            logger.notice("no GATT face on \(face.adapter.name): \(error.message)")
            try? await gracefulShutdown()
            return
        }
        let events = app.events
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await command in commands { await perform(command) }
                }
                group.addTask {
                    var sequence: UInt16 = 0
                    for await event in events {
                        await notify(event, sequence: &sequence)
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
        face.close()
    }

    /// A central's command, carried out as this device's user's.
    private func perform(_ command: GATTCommand) async {
        do {
            switch command {
            case .pickUp(let view): try await app.pickUp(view)
            case .move(let view, let x, let y): try await app.move(view, x: x, y: y)
            case .drop(let view, let x, let y): try await app.drop(view, x: x, y: y)
            case .increment(let count): _ = try await app.increment(by: count)
            }
        } catch {
            logger.debug("a central's command failed", metadata: ["command": "\(command)", "error": "\(error)"])
        }
    }

    /// An event of the apps, as the centrals see it; the face's own numbering of moves.
    private func notify(_ event: BubblesAndCounterEvent, sequence: inout UInt16) async {
        let notified: GATTEvent?
        switch event {
        case .move(let view, let x, let y, _):
            sequence &+= 1
            notified = .move(view: view, x: x, y: y, sequence: sequence)
        case .drop(let view, let x, let y, _):
            notified = .bubble(view: view, holder: nil, x: x, y: y)
        case .holder(let view, let holder):
            let bubble = try? await app.bubbles().bubbles[Int(view)]
            notified = bubble.map { .bubble(view: view, holder: holder, x: $0.x, y: $0.y) }
        case .counter(let peer, let count, _):
            notified = .count(peer: peer, count: count)
        default:
            notified = nil
        }
        guard let notified else { return }
        do {
            try face.notify(notified)
        } catch {
            logger.debug("an event not notified", metadata: ["event": "\(event)", "error": "\(error)"])
        }
    }
}
