import DBusClient
import Foundation
import Logging

/// A dbus-daemon on a socket in a folder of its own (nothing on the system bus), ended with the test that made it.
public final class PrivateBus {
    public let folder: String
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

    public func connect() throws -> BusConnection {
        try BusConnection.connect(address: address, logger: Logger(label: "test.bus"))
    }

    deinit {
        daemon.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
