import DBusClient
import Foundation
import LanSessionBlueZ
import LanSessionLE
import Logging
import Synchronization
import TestSupport
import Testing
import WireCodec

/// The GATT face through bluetoothd, against a stand-in for bluetoothd on a private bus: a connection that owns
/// `org.bluez`, takes the application's registration, and then calls the application's objects as bluetoothd does
/// for a central's reads, writes and subscription.
@Suite(.serialized)
struct BlueZGATTFaceTests {
    /// What the stand-in saw.
    struct Seen {
        var registered: [String] = []
        var unregistered: [String] = []
    }

    let identity = #"peer 1122334455667788 "alice" session "lab" fingerprint ab:cd"#

    @Test func registersItsApplicationAndServesTheFaceOfTheSpec() async throws {
        let bus = try await PrivateBus()
        let bluez = try await bus.bluetoothd()
        let app = try bus.connect()
        let seen = Mutex(Seen())
        try await bluez.export("/org/bluez") { call in
            guard call.path == "/org/bluez/hci1", call.interface == "org.bluez.GattManager1" else { return .unknown }
            let path = call.arguments.first?.stringValue ?? "?"
            switch call.member {
            case "RegisterApplication": seen.withLock { $0.registered.append(path) }
            case "UnregisterApplication": seen.withLock { $0.unregistered.append(path) }
            default: return .unknown
            }
            return .empty
        }
        // The application behind the face takes any value but an empty one or one that starts with 0xFF.
        let commands = Mutex<[[UInt8]]>([])
        let face = BlueZGATTFace(bus: app, adapter: "hci1", identity: identity, logger: Logger(label: "test.gatt")) {
            value throws(GATTNotACommand) in
            guard let first = value.first, first != 0xFF else { throw GATTNotACommand("no command") }
            commands.withLock { $0.append(value) }
        }
        try await face.start()
        #expect(seen.withLock { $0.registered } == ["/org/lansession/gatt"])

        // What bluetoothd reads of the application: one service and three characteristics, as in section 4.2.
        let managed = try await bluez.call(
            destination: app.uniqueName, path: "/org/lansession/gatt", interface: "org.freedesktop.DBus.ObjectManager",
            member: "GetManagedObjects")
        guard case .dictionary(_, _, let entries) = managed.first else {
            Issue.record("GetManagedObjects: \(managed)")
            return
        }
        var objects: [String: [String: BusValue]] = [:]
        for entry in entries {
            guard let path = entry.key.stringValue, case .dictionary(_, _, let interfaces) = entry.value else {
                continue
            }
            for interface in interfaces { objects[path] = interface.value.propertiesValue }
        }
        let service = "/org/lansession/gatt/service0"
        #expect(objects[service]?["UUID"] == .string(GATTFace.serviceUUID))
        #expect(objects[service]?["Primary"] == .boolean(true))
        let characteristics = objects.filter { $0.key.hasPrefix(service + "/") }
        #expect(characteristics.count == 3)
        let byUUID = Dictionary(
            uniqueKeysWithValues: characteristics.map { ($0.value["UUID"]?.stringValue ?? "", $0) })
        #expect(byUUID[GATTFace.identityUUID]?.value["Flags"] == .strings(["read"]))
        #expect(byUUID[GATTFace.commandUUID]?.value["Flags"] == .strings(["write-without-response", "write"]))
        #expect(byUUID[GATTFace.eventsUUID]?.value["Flags"] == .strings(["read", "notify"]))
        #expect(characteristics.values.allSatisfy { $0["Service"] == .objectPath(service) })
        let identityPath = try #require(byUUID[GATTFace.identityUUID]?.key)
        let commandPath = try #require(byUUID[GATTFace.commandUUID]?.key)
        let eventsPath = try #require(byUUID[GATTFace.eventsUUID]?.key)

        func characteristic(_ path: String, _ member: String, _ arguments: [BusValue] = []) async throws -> [BusValue] {
            try await bluez.call(
                destination: app.uniqueName, path: path, interface: "org.bluez.GattCharacteristic1", member: member,
                arguments)
        }
        // Reads, from an offset as a long read goes on.
        #expect(
            try await characteristic(identityPath, "ReadValue", [.properties([])]) == [.bytes(Array(identity.utf8))])
        #expect(
            try await characteristic(identityPath, "ReadValue", [.properties([("offset", .uint16(5))])]) == [
                .bytes(Array(identity.utf8.dropFirst(5)))
            ])
        let pastTheEnd = await #expect(throws: BusError.self) {
            _ = try await characteristic(identityPath, "ReadValue", [.properties([("offset", .uint16(500))])])
        }
        #expect(pastTheEnd?.name == "org.bluez.Error.InvalidOffset")
        let readCommand = await #expect(throws: BusError.self) {
            _ = try await characteristic(commandPath, "ReadValue", [.properties([])])
        }
        #expect(readCommand?.name == "org.bluez.Error.NotPermitted")

        // Writes: a command goes to the application; one it refuses is refused with Failed (ATT error 0x80).
        _ = try await characteristic(
            commandPath, "WriteValue", [.bytes([0x02, 0x27, 0x05]), .properties([("type", .string("command"))])])
        _ = try await characteristic(
            commandPath, "WriteValue",
            [.bytes([0x0c, 0x25, 0x00, 0x00, 0x00, 0xc9, 0x42, 0x00, 0x00, 0xa2, 0xc1, 0x01, 0x00]), .properties([])])
        #expect(
            commands.withLock { $0 } == [
                [0x02, 0x27, 0x05], [0x0c, 0x25, 0x00, 0x00, 0x00, 0xc9, 0x42, 0x00, 0x00, 0xa2, 0xc1, 0x01, 0x00],
            ])
        for bad: [UInt8] in [[0xff, 0xff], []] {
            let refused = await #expect(throws: BusError.self) {
                _ = try await characteristic(commandPath, "WriteValue", [.bytes(bad), .properties([])])
            }
            #expect(refused?.name == "org.bluez.Error.Failed", "\(bad)")
            #expect(refused?.message.hasSuffix(": 0x80") == true, "\(refused?.message ?? "")")
        }
        #expect(commands.withLock { $0.count } == 2)

        // Notifications: once bluetoothd asks for them, each event is a change of the characteristic's Value.
        let changes = try await bluez.signals(
            sender: app.uniqueName, path: eventsPath, interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged")
        var iterator = changes.makeAsyncIterator()
        // The original apps' framed counts of alice, 41 and 42: to the face, only values.
        let count41: [UInt8] = [0x0b, 0x28, 0x01, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01, 0x29]
        face.notify(count41)  // nobody subscribed: only what a read gets
        #expect(try await characteristic(eventsPath, "ReadValue", [.properties([])]) == [.bytes(count41)])
        _ = try await characteristic(eventsPath, "StartNotify")
        let started = await iterator.next()
        #expect(started?.arguments.dropFirst().first?.propertiesValue?["Notifying"] == .boolean(true))
        face.notify([0x0b, 0x28, 0x01, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01, 0x2a])
        let notified = await iterator.next()
        #expect(notified?.arguments.first == .string("org.bluez.GattCharacteristic1"))
        #expect(
            notified?.arguments.dropFirst().first?.propertiesValue?["Value"]
                == .bytes([0x0b, 0x28, 0x01, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01, 0x2a]))
        _ = try await characteristic(eventsPath, "StopNotify")
        let stopped = await iterator.next()
        #expect(stopped?.arguments.dropFirst().first?.propertiesValue?["Notifying"] == .boolean(false))

        await face.close()
        #expect(seen.withLock { $0.unregistered } == ["/org/lansession/gatt"])
    }

    @Test func failsWithBluetoothdsErrorWhenTheAdapterHasNoGATTManager() async throws {
        let bus = try await PrivateBus()
        let bluez = try await bus.bluetoothd()
        let app = try bus.connect()
        try await bluez.export("/org/bluez") { _ in
            .error(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no adapter hci7")
        }
        let face = BlueZGATTFace(bus: app, adapter: "hci7", identity: identity, logger: Logger(label: "test.gatt")) {
            _ in
        }
        let failed = await #expect(throws: BusError.self) { try await face.start() }
        #expect(failed?.message.contains("no adapter hci7") == true)
        // Its objects went with the failure: the prefix can be exported again.
        try await app.export("/org/lansession/gatt") { _ in .empty }
    }
}

extension BlueZGATTFaceTests {
    @Test func registersAgainWhenBluetoothdComesBack() async throws {
        let bus = try await PrivateBus()
        let app = try bus.connect()
        /// A stand-in for one run of bluetoothd: it owns org.bluez and counts registrations.
        final class Registrations: Sendable {
            let paths = Mutex<[String]>([])
        }
        func bluetoothd() async throws -> (BusConnection, Registrations) {
            let connection = try await bus.bluetoothd()
            let seen = Registrations()
            try await connection.export("/org/bluez") { call in
                guard call.member == "RegisterApplication" else { return .unknown }
                seen.paths.withLock { $0.append(call.arguments.first?.stringValue ?? "?") }
                return .empty
            }
            return (connection, seen)
        }
        let (first, seenByFirst) = try await bluetoothd()
        let face = BlueZGATTFace(bus: app, adapter: "hci1", identity: identity, logger: Logger(label: "test.gatt")) {
            _ in
        }
        try await face.start()
        #expect(seenByFirst.paths.withLock { $0 } == ["/org/lansession/gatt"])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await face.keepRegistered() }
            first.close()  // bluetoothd stops, then starts again
            let (_, seenBySecond) = try await bluetoothd()
            #expect(
                await waitUntil(.seconds(10), every: .milliseconds(10)) {
                    seenBySecond.paths.withLock { $0 } == ["/org/lansession/gatt"]
                })
            group.cancelAll()
        }
    }
}
