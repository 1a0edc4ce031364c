import BubblesAndCounter
import BubblesAndCounterGATT
import DBusClient
@_spi(Diagnostics) import LanSession
import LanSessionBlueZ
import LanSessionLE
import LanSessionRFCOMM
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import WireCodec

/// The LE GATT face of the daemon's apps (docs/wire-format.md 4.2): what a central writes goes to the counter and
/// the bubbles as if this device's user had done it; the apps' moves, holders and counts go to subscribed centrals.
///
/// Where bluetoothd runs (it owns `org.bluez` on the system bus) the face is a GATT application registered with it
/// (``BlueZGATTFace``); elsewhere the daemon serves ATT itself (``GATTFace``). The choice is made at start, logged, and
/// told by `status` (``BluetoothState``). Either face hands each command over without waiting; this service carries
/// them out in order. At most ``maxWaitingCommands`` wait: a command that finds no room is refused (a Write Request
/// is answered with the error of a value that is no command), not kept in place of an older one.
struct GATTService: Service {
    let adapter: RFCOMMTransport.Adapter
    let identity: String
    let deviceName: String
    let commands: AsyncStream<GATTCommand>
    let continuation: AsyncStream<GATTCommand>.Continuation
    let app: BubblesAndCounterApp
    let loop: any EventLoop
    let state: BluetoothState
    let logger: Logger

    /// Commands of the centrals waiting to be carried out, at most.
    static let maxWaitingCommands = GATTFace.maxPendingNotifications

    /// The face in use.
    private enum Face {
        case kernel(GATTFace)
        case bluez(BlueZGATTFace, BusConnection)

        /// Notifies `event`; with no central on the daemon's own face it is not even encoded (every move passes here).
        func notify(_ event: GATTEvent) throws(WireError) {
            switch self {
            case .kernel(let face): if face.hasCentrals { face.notify(try event.payload()) }
            case .bluez(let face, _): face.notify(try event.payload())
            }
        }

        func close() async {
            switch self {
            case .kernel(let face): face.close()
            case .bluez(let face, let bus):
                await face.close()
                bus.close()
            }
        }
    }

    init(
        adapter: RFCOMMTransport.Adapter, session: Session, app: BubblesAndCounterApp, loop: any EventLoop,
        state: BluetoothState, logger: Logger
    ) {
        (commands, continuation) = AsyncStream.makeStream(
            of: GATTCommand.self, bufferingPolicy: .bufferingOldest(Self.maxWaitingCommands))
        let configuration = session.configuration
        identity = GATTFace.identityText(
            peer: session.peerID, name: configuration.displayName, session: configuration.sessionName,
            fingerprint: configuration.isInsecure ? nil : session.fingerprint)
        deviceName = configuration.displayName
        self.adapter = adapter
        self.app = app
        self.loop = loop
        self.state = state
        self.logger = logger
    }

    func run() async throws {
        guard let face = await start() else {
            try? await gracefulShutdown()
            return
        }
        let events = app.events
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await command in commands { await perform(command) }
                }
                if case .bluez(let face, _) = face {
                    group.addTask {
                        await face.keepRegistered()
                        guard !Task.isCancelled else { return }
                        // The system bus went: the face is gone, the daemon goes on without it.
                        logger.notice("the system bus closed: no GATT face through bluetoothd any more")
                        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3_600)) }
                    }
                }
                group.addTask {
                    var numbering = GATTNotifications()
                    for await event in events {
                        await notify(event, through: face, numbering: &numbering)
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
        await face.close()
        state.gattFace.withLock { $0 = nil }
    }

    /// Starts the face: through bluetoothd when it runs, else the daemon's own ATT server; nil (with a notice) when
    /// neither can start.
    private func start() async -> Face? {
        let commands = Self.taker(continuation)
        if let bus = try? BusConnection.system(logger: logger) {
            if (try? await bus.nameHasOwner("org.bluez")) == true {
                let face = BlueZGATTFace(
                    bus: bus, adapter: adapter.name, identity: identity, logger: logger, commands: commands)
                do {
                    try await face.start()
                    logger.info(
                        "GATT face through bluetoothd on \(adapter.name) (\(adapter.address)): service \(GATTFace.serviceUUID)"
                    )
                    state.gattFace.withLock { $0 = .bluetoothd }
                    return .bluez(face, bus)
                } catch {
                    logger.notice("no GATT face through bluetoothd on \(adapter.name): \(error.message)")
                    bus.close()
                    return nil
                }
            }
            bus.close()
        }
        let face = GATTFace(
            adapter: adapter, identity: identity, deviceName: deviceName, logger: logger, commands: commands)
        do {
            try await face.start(on: loop)
            logger.info("GATT face on \(adapter.name) (\(adapter.address)): service \(GATTFace.serviceUUID)")
            state.gattFace.withLock { $0 = .attServer }
            return .kernel(face)
        } catch {
            logger.notice("no GATT face on \(adapter.name): \(error.message)")
            return nil
        }
    }

    /// What the faces hand a central's value to: the command it is, queued; refused when it is none, or when
    /// ``maxWaitingCommands`` wait already.
    static func taker(_ continuation: AsyncStream<GATTCommand>.Continuation) -> GATTCommandTaker {
        { value throws(GATTNotACommand) in
            let command: GATTCommand
            do throws(GATTCommand.DecodingError) {
                command = try GATTCommand(frame: value)
            } catch {
                throw GATTNotACommand(error.reason)
            }
            if case .dropped = continuation.yield(command) {
                throw GATTNotACommand("busy: \(maxWaitingCommands) commands wait to be carried out")
            }
        }
    }

    /// A central's command, carried out as this device's user's.
    private func perform(_ command: GATTCommand) async {
        do throws(SessionError) {
            try await command.perform(on: app)
        } catch {
            logger.debug("a central's command failed", metadata: ["command": "\(command)", "error": "\(error)"])
        }
    }

    /// An event of the apps, as the centrals see it; the face's own numbering of moves.
    private func notify(
        _ event: BubblesAndCounterEvent, through face: Face, numbering: inout GATTNotifications
    ) async {
        let notified = await numbering.notification(for: event) { view in
            (try? await app.bubbles().bubbles[Int(view)]).map { ($0.x, $0.y) }
        }
        guard let notified else { return }
        do {
            try face.notify(notified)
        } catch {
            logger.debug("an event not notified", metadata: ["event": "\(event)", "error": "\(error)"])
        }
    }
}

/// What the daemon's Bluetooth runs on, for `status`.
final class BluetoothState: Sendable {
    /// Who serves the GATT face.
    enum GATTFaceServer: String, Sendable {
        /// A GATT application of bluetoothd's.
        case bluetoothd
        /// The daemon's own ATT server on the LE ATT channel.
        case attServer = "att"
    }

    /// Who serves the GATT face now; nil without one.
    let gattFace = Mutex<GATTFaceServer?>(nil)
}
