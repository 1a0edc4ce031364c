import DBusClient
import LanSessionBlueZ
import LanSessionLE
import Logging
import Synchronization
import TestSupport
import Testing

/// LE discovery through bluetoothd, against a stand-in for bluetoothd on a private bus: the filter and the discovery
/// asked of the adapter, and the devices it reports (a new device, then a device's new service data) as sightings.
@Suite(.serialized)
struct BlueZLEScannerTests {
    final class Seen: Sendable {
        let calls = Mutex<[String]>([])
        let filter = Mutex<[String: BusValue]?>(nil)
    }

    static let uuid = "4c414e53-4553-5349-4f4e-0000000000a0"

    static func device(_ address: String, type: String, data: [UInt8]) -> BusValue {
        .properties([
            ("Address", .string(address)), ("AddressType", .string(type)),
            ("ServiceData", .properties([(uuid, .bytes(data))])),
        ])
    }

    @Test func reportsTheDevicesBluetoothdSeesWithLanSessionsServiceData() async throws {
        let bus = try await PrivateBus()
        let bluez = try bus.connect()
        let app = try bus.connect()
        defer {
            app.close()
            bluez.close()
        }
        try await bluez.requestName("org.bluez")
        let seen = Seen()
        try await bluez.export("/org/bluez") { call in
            switch (call.interface, call.member) {
            case ("org.bluez.Adapter1", let member) where call.path == "/org/bluez/hci1":
                seen.calls.withLock { $0.append(member) }
                if member == "SetDiscoveryFilter" {
                    seen.filter.withLock { $0 = call.arguments.first?.propertiesValue }
                }
                return .empty
            case ("org.freedesktop.DBus.Properties", "Get"):
                return .values([.variant(.string(call.path.hasSuffix("00_01") ? "public" : "random"))])
            default:
                return .unknown
            }
        }
        let scanner = BlueZLEScanner(bus: app, adapter: "hci1", logger: Logger(label: "test.scan"))
        try await scanner.start()
        #expect(seen.calls.withLock { $0 } == ["SetDiscoveryFilter", "StartDiscovery"])
        let filter = try #require(seen.filter.withLock { $0 })
        #expect(filter["UUIDs"] == .strings([Self.uuid]))
        #expect(filter["Transport"] == .string("le"))
        #expect(filter["DuplicateData"] == .boolean(true))

        let (sightings, continuation) = AsyncStream.makeStream(of: LESighting.self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await scanner.run(reporting: continuation) }
            var iterator = sightings.makeAsyncIterator()
            let data: [UInt8] = [1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x94, 0x60, 0x92, 0xF4]
            // A device of another adapter, and one without LanSession's data: nothing. Then a new device.
            bluez.emitSignal(
                path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                [
                    .objectPath("/org/bluez/hci0/dev_00_AA_01_01_00_09"),
                    .dictionary(
                        key: "s", value: "a{sv}",
                        [
                            .init(
                                .string("org.bluez.Device1"),
                                Self.device("00:AA:01:01:00:09", type: "public", data: data))
                        ]
                    ),
                ])
            bluez.emitSignal(
                path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                [
                    .objectPath("/org/bluez/hci1/dev_00_AA_01_01_00_01"),
                    .dictionary(
                        key: "s", value: "a{sv}",
                        [
                            .init(
                                .string("org.bluez.Device1"),
                                Self.device("00:aa:01:01:00:01", type: "public", data: data))
                        ]
                    ),
                ])
            #expect(
                await iterator.next()
                    == LESighting(address: "00:AA:01:01:00:01", isPublic: true, serviceData: data))
            // The same device advertising again: only its service data changes; its address type is asked once.
            var again = data
            again[9] = 0x95
            for _ in 0..<2 {
                bluez.emitPropertiesChanged(
                    path: "/org/bluez/hci1/dev_00_AA_01_01_00_01", interface: "org.bluez.Device1",
                    [("ServiceData", .properties([(Self.uuid, .bytes(again))])), ("RSSI", .int16(-60))])
                #expect(
                    await iterator.next()
                        == LESighting(address: "00:AA:01:01:00:01", isPublic: true, serviceData: again))
            }
            // A random address is reported as such (the discovery then ignores it).
            bluez.emitPropertiesChanged(
                path: "/org/bluez/hci1/dev_00_AA_01_01_00_02", interface: "org.bluez.Device1",
                [("ServiceData", .properties([(Self.uuid, .bytes(data))]))])
            #expect(await iterator.next()?.isPublic == false)
            group.cancelAll()
        }
        // Stopped with the task.
        #expect(
            await waitUntil(.seconds(5), every: .milliseconds(10)) {
                seen.calls.withLock { $0.last } == "StopDiscovery"
            })
    }
}
