import DBusClient
import Foundation
import LanSessionBlueZ
import Logging
import Synchronization
import TestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The RFCOMM service record through bluetoothd, against a stand-in for bluetoothd's ProfileManager1 on a private bus.
@Suite(.serialized)
struct BlueZProfileTests {
    final class Seen: Sendable {
        let calls = Mutex<[BusMethodCall]>([])
    }

    @Test func registersTheRecordOfTheSpecWithoutAskingBluetoothdToListen() async throws {
        let bus = try await PrivateBus()
        let bluez = try await bus.bluetoothd()
        let app = try bus.connect()
        let seen = Seen()
        try await bluez.export("/org/bluez") { call in
            guard call.path == "/org/bluez", call.interface == "org.bluez.ProfileManager1" else { return .unknown }
            seen.calls.withLock { $0.append(call) }
            return .empty
        }
        let profile = BlueZProfile(bus: app, channel: 12, logger: Logger(label: "test.profile"))
        try await profile.start()
        let register = try #require(seen.calls.withLock { $0.first })
        #expect(register.member == "RegisterProfile")
        #expect(register.arguments.first == .objectPath("/org/lansession/rfcomm"))
        #expect(register.arguments.dropFirst().first == .string("4c414e53-4553-5349-4f4e-0000000000a0"))
        let options = try #require(register.arguments.last?.propertiesValue)
        #expect(options["Role"] == .string("server"))
        #expect(options["Channel"] == nil, "bluetoothd would listen on the daemon's channel")
        #expect(options["PSM"] == nil)
        let record = try #require(options["ServiceRecord"]?.stringValue)
        #expect(record == BlueZProfile.serviceRecord(channel: 12))
        // The record parses as XML and names RFCOMM (0x0003) with channel 12.
        let parsed = try XMLDocument(xmlString: record)
        let protocols = try parsed.nodes(forXPath: "//attribute[@id='0x0004']//uint8/@value").compactMap(\.stringValue)
        #expect(protocols == ["0xc"])
        let classes = try parsed.nodes(forXPath: "//attribute[@id='0x0001']//uuid/@value").compactMap(\.stringValue)
        #expect(classes == ["4c414e53-4553-5349-4f4e-0000000000a0"])

        // bluetoothd never hands over a connection: the daemon accepts its own.
        let handed = await #expect(throws: BusError.self) {
            _ = try await bluez.call(
                destination: app.uniqueName, path: "/org/lansession/rfcomm", interface: "org.bluez.Profile1",
                member: "NewConnection", [.objectPath("/org/bluez/hci0/dev_00_11_22_33_44_55"), .properties([])])
        }
        #expect(handed?.name == "org.bluez.Error.Rejected")
        _ = try await bluez.call(
            destination: app.uniqueName, path: "/org/lansession/rfcomm", interface: "org.bluez.Profile1",
            member: "Release")

        await profile.close()
        #expect(seen.calls.withLock { $0.map(\.member) } == ["RegisterProfile", "UnregisterProfile"])
    }
}
