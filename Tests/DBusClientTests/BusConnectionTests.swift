import DBusClient
import Foundation
import Logging
import Testing

@testable import TestSupport

/// The D-Bus client against a real dbus-daemon: a private bus on a Unix socket of the test's own (nothing on the
/// system bus), and two connections to it, one exporting objects and one calling them.
@Suite(.serialized)
struct BusConnectionTests {
    static let sample: [BusValue] = [
        .byte(7), .boolean(true), .int16(-2), .uint16(65_000), .int32(-70_000), .uint32(4_000_000_000),
        .int64(-1 << 40), .uint64(1 << 63), .double(2.5), .string("grüße \"quoted\""), .objectPath("/org/example/a"),
        .signature("a{sv}"), .bytes([0, 1, 2, 255]), .bytes([]),
        .array(element: "s", []), .strings(["read", "notify"]),
        .properties([("UUID", .string("4c414e53-4553-5349-4f4e-0000000000a0")), ("Primary", .boolean(true))]),
        .dictionary(
            key: "o", value: "a{sa{sv}}",
            [
                .init(
                    .objectPath("/org/example/a/b"),
                    .dictionary(
                        key: "s", value: "a{sv}",
                        [.init(.string("org.example.Thing"), .properties([("Value", .bytes([1, 2]))]))]))
            ]),
        .structure([.int32(1), .string("two"), .variant(.uint16(3))]), .variant(.array(element: "ay", [.bytes([9])])),
    ]

    @Test func callsAnExportedObjectWithEveryKindOfValue() async throws {
        let bus = try await PrivateBus()
        let server = try bus.connect()
        let client = try bus.connect()
        try await server.export("/org/example") { call in
            switch (call.interface, call.member) {
            case ("org.example.Echo", "Echo"): .values(call.arguments)
            case ("org.example.Echo", "Where"): .values([.objectPath(call.path), .string(call.sender ?? "")])
            case ("org.example.Echo", "Fail"): .error(name: "org.example.Error.Refused", message: "no, thanks")
            default: .unknown
            }
        }
        let echoed = try await client.call(
            destination: server.uniqueName, path: "/org/example/deep/er", interface: "org.example.Echo",
            member: "Echo", Self.sample)
        #expect(echoed == Self.sample)
        let signatures = echoed.map(\.signature)
        #expect(signatures.contains("a{oa{sa{sv}}}"))
        let whereTo = try await client.call(
            destination: server.uniqueName, path: "/org/example/x", interface: "org.example.Echo", member: "Where")
        #expect(whereTo == [.objectPath("/org/example/x"), .string(client.uniqueName)])

        let refused = await #expect(throws: BusError.self) {
            _ = try await client.call(
                destination: server.uniqueName, path: "/org/example", interface: "org.example.Echo", member: "Fail")
        }
        #expect(refused?.code == .replied)
        #expect(refused?.name == "org.example.Error.Refused")
        #expect(refused?.message.contains("no, thanks") == true)
        let unknown = await #expect(throws: BusError.self) {
            _ = try await client.call(
                destination: server.uniqueName, path: "/org/example", interface: "org.example.Echo", member: "Nope")
        }
        #expect(unknown?.name == "org.freedesktop.DBus.Error.UnknownMethod")
        let outside = await #expect(throws: BusError.self) {
            _ = try await client.call(
                destination: server.uniqueName, path: "/elsewhere", interface: "org.example.Echo", member: "Echo")
        }
        #expect(outside?.code == .replied)

        await server.withdraw("/org/example")
        let withdrawn = await #expect(throws: BusError.self) {
            _ = try await client.call(
                destination: server.uniqueName, path: "/org/example", interface: "org.example.Echo", member: "Echo")
        }
        #expect(withdrawn?.code == .replied)
    }

    @Test func tellsWhichNamesHaveOwners() async throws {
        let bus = try await PrivateBus()
        let client = try bus.connect()
        #expect(try await client.nameHasOwner("org.freedesktop.DBus"))
        #expect(try await !client.nameHasOwner("org.bluez"))
        let other = try bus.connect()
        #expect(try await client.nameHasOwner(other.uniqueName))
        other.close()
        #expect(
            await waitUntil(.seconds(5), every: .milliseconds(20)) {
                (try? await client.nameHasOwner(other.uniqueName)) == false
            })
    }

    @Test func failsClearlyWithoutABusAndAfterClose() async throws {
        let missing = #expect(throws: BusError.self) {
            _ = try BusConnection.connect(address: "unix:path=/nonexistent/bus", logger: Logger(label: "test.bus"))
        }
        #expect(missing?.code == .noBus)
        #expect(missing?.message.contains("/nonexistent/bus") == true)

        let bus = try await PrivateBus()
        let client = try bus.connect()
        client.close()
        let closed = await #expect(throws: BusError.self) { _ = try await client.nameHasOwner("org.bluez") }
        #expect(closed?.code == .closed)
    }

    @Test func failsWaitingCallsWhenTheBusGoes() async throws {
        let bus = try await PrivateBus()
        let server = try bus.connect()
        let client = try bus.connect()
        // An object that answers only once the daemon is gone: the call is still waiting when the bus goes.
        let gone = DispatchSemaphore(value: 0)
        let arrived = DispatchSemaphore(value: 0)
        try await server.export("/slow") { _ in
            arrived.signal()
            gone.wait()
            return .empty
        }
        async let reply = client.call(
            destination: server.uniqueName, path: "/slow", interface: "org.example.Slow", member: "Wait",
            timeout: .seconds(20))
        #expect(await waitUntil(.seconds(5), every: .milliseconds(10)) { arrived.wait(timeout: .now()) == .success })
        bus.daemon.stop()
        gone.signal()
        do {
            let values = try await reply
            Issue.record("a reply after the bus went: \(values)")
        } catch {
            let code = (error as? BusError)?.code
            #expect(code == .closed || code == .replied, "\(error)")
        }
    }
}
