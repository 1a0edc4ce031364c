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
        let socket = "\(folder)/bus"
        guard
            await waitUntil(
                .seconds(10), every: .milliseconds(20), { FileManager.default.fileExists(atPath: socket) })
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
