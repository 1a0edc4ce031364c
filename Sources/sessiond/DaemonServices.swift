import BubblesAndCounter
import LanSession
import LanSessionDiscovery
import LanSessionLE
import Logging
import ServiceLifecycle

// The daemon's long-running parts, each a `Service` of the daemon's `ServiceGroup`.

/// Hands the session's events and the apps' to every watcher until the session ends.
struct EventPumpService: Service {
    let hub: EventHub
    let desk: StreamDesk
    let events: AsyncStream<SessionEvent>
    let appEvents: AsyncStream<BubblesAndCounterEvent>
    let log: OperatorLog

    func run() async throws {
        // Ends when the session stopped.
        await hub.pump(events, appEvents) { event in
            log.record(event)
            if case .session(.streamOpened(let stream)) = event { desk.take(stream) }
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
    let discovery: LEDiscovery

    func run() async throws {
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
