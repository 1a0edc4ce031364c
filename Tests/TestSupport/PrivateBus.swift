import DBusClient
import Foundation
import Logging

/// A dbus-daemon on a socket in a folder of its own (nothing on the system bus), ended with the test that made it.
public final class PrivateBus {
    public let folder: String
    private let lock = NSLock()
    private var connections: [BusConnection] = []
    public let daemon: HostProcess
    public let address: String

    public init() async throws {
        folder =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("bus-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        address = "unix:path=\(folder)/bus"
        daemon = try HostProcess.local([
            "/usr/bin/dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=\(address)",
        ])
        // The socket's file appears at bind(), before the daemon listens: ready once a client gets in.
        let address = address
        guard
            await waitUntil(
                .seconds(10), every: .milliseconds(20),
                {
                    guard let probe = try? BusConnection.connect(address: address, logger: Logger(label: "test.bus"))
                    else { return false }
                    probe.close()
                    return true
                })
        else {
            throw BusError(.noBus, message: "dbus-daemon did not start: \(daemon.stderr)")
        }
    }

    /// A connection to the bus, closed with the bus (or before, by the test).
    public func connect() throws -> BusConnection {
        let connection = try BusConnection.connect(address: address, logger: Logger(label: "test.bus"))
        lock.withLock { connections.append(connection) }
        return connection
    }

    /// A connection that owns `org.bluez`, as bluetoothd's does: a stand-in for bluetoothd.
    public func bluetoothd() async throws -> BusConnection {
        let connection = try connect()
        try await connection.requestName("org.bluez")
        return connection
    }

    deinit {
        for connection in lock.withLock({ connections }) { connection.close() }
        daemon.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
