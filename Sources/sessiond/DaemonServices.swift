import LanSession
import LanSessionDiscovery
import LanSessionLE
import Logging
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
