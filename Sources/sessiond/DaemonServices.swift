import DBusClient
import LanSession
import LanSessionBlueZ
import LanSessionDiscovery
import LanSessionLE
import Logging
import NIOCore
import ServiceLifecycle

// The daemon's long-running parts, each a `Service` of the daemon's `ServiceGroup`.

/// Keeps the event hub until the session's events and the apps' end (the session stopped), then ends it: the hub
/// hands every event on as it happens, on the loop, so this service only waits.
struct EventPumpService: Service {
    let hub: EventHub

    func run() async throws {
        // Ends when the session stopped, or the group is cancelled.
        let hub = self.hub
        await withTaskCancellationHandler {
            try? await hub.ended.get()
        } onCancel: {
            hub.end()
        }
        try? await gracefulShutdown()  // the group shuts services down in turn: wait for this one's
    }
}

/// Advertises and browses until shutdown, then withdraws the advertisement.
struct DiscoveryService: Service {
    let discovery: SessionDiscovery
    let connection: AvahiConnection

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await discovery.run(on: connection)
        }
        await connection.close()
    }
}

/// Advertises and scans over Bluetooth LE until shutdown, then withdraws the advertisement.
struct LEDiscoveryService: Service {
    let session: Session
    let transport: L2CAPTransport
    let loop: any EventLoop
    let state: BluetoothState
    let logger: Logger
    let report: @Sendable (String) -> Void

    func run() async throws {
        let (adapter, psm) = (transport.adapter, transport.psm)
        // Where bluetoothd runs, its discovery scans (it merges other clients' discoveries with it); the management
        // socket only advertises (docs/architecture.md says why bluetoothd 5.66 cannot).
        if let bus = try? BusConnection.system(logger: logger) {
            defer { bus.close() }
            if (try? await bus.nameHasOwner("org.bluez")) == true {
                let scanner = BlueZLEScanner(bus: bus, adapter: adapter.name, logger: logger)
                do {
                    try await scanner.start()
                    let (sightings, continuation) = AsyncStream.makeStream(
                        of: LESighting.self, bufferingPolicy: .bufferingNewest(256))
                    let discovery = LEDiscovery(
                        session: session, adapter: adapter, psm: psm, eventLoop: loop, logger: logger,
                        sightings: sightings, report: report)
                    logger.info(
                        "LE discovery on \(adapter.name) (\(adapter.address), PSM \(psm)): scanning through bluetoothd")
                    state.leScan.withLock { $0 = .bluetoothd }
                    try await cancelWhenGracefulShutdown {
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask { await scanner.run(reporting: continuation) }
                            group.addTask { try await discovery.run() }
                            try await group.next()
                            group.cancelAll()
                        }
                    }
                    return
                } catch {
                    logger.notice(
                        "bluetoothd did not scan for LE discovery (\(error)); scanning on the management socket")
                }
            }
        }
        logger.info("LE discovery on \(adapter.name) (\(adapter.address), PSM \(psm))")
        state.leScan.withLock { $0 = .managementSocket }
        let discovery = LEDiscovery(
            session: session, adapter: adapter, psm: psm, eventLoop: loop, logger: logger, report: report)
        try await cancelWhenGracefulShutdown {
            try await discovery.run()
        }
    }
}

/// Serves the page until a graceful shutdown.
struct PageService: Service {
    let server: PageServer

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await server.run()
        }
        await server.close()
    }
}

/// Serves the control socket until shutdown, then removes it.
struct ControlService: Service {
    let server: ControlServer

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await server.run()
        }
        await server.close()
    }
}
