import DBusClient
import LanSessionLE
import Logging
import Synchronization

/// LanSession's RFCOMM service announced in the adapter's SDP database through bluetoothd
/// (`org.bluez.ProfileManager1`), so that `sdptool browse` and any client that looks services up find it, and a peer
/// dials the channel the record names (docs/wire-format.md 4.4).
///
/// The profile carries its own record and no `Channel` option: bluetoothd publishes the record and listens on nothing,
/// since the daemon listens on the channel itself. A connection bluetoothd would hand over (`NewConnection`) is refused.
public final class BlueZProfile: Sendable {
    static let path = "/org/lansession/rfcomm"

    /// The RFCOMM channel the record names.
    public let channel: Int
    private let bus: BusConnection
    private let logger: Logger
    private let registered = Mutex(false)

    public init(bus: BusConnection, channel: Int, logger: Logger) {
        self.bus = bus
        self.channel = channel
        self.logger = logger
    }

    /// The record of section 4.4, in the XML form bluetoothd parses: the service class (LanSession's UUID), the
    /// protocols (L2CAP, then RFCOMM with the channel), the public browse group and the service name.
    public static func serviceRecord(channel: Int) -> String {
        let uuid = GATTFace.serviceUUID.lowercased()
        return """
            <?xml version="1.0" encoding="UTF-8" ?>
            <record>
              <attribute id="0x0001"><sequence><uuid value="\(uuid)" /></sequence></attribute>
              <attribute id="0x0004">
                <sequence>
                  <sequence><uuid value="0x0100" /></sequence>
                  <sequence><uuid value="0x0003" /><uint8 value="0x\(String(channel, radix: 16))" /></sequence>
                </sequence>
              </attribute>
              <attribute id="0x0005"><sequence><uuid value="0x1002" /></sequence></attribute>
              <attribute id="0x0100"><text value="LanSession" /></attribute>
            </record>
            """
    }

    /// Exports the profile's object and registers it with bluetoothd.
    public func start() async throws(BusError) {
        try await bus.export(Self.path) { call in
            guard call.interface == "org.bluez.Profile1" else { return .unknown }
            switch call.member {
            case "Release", "RequestDisconnection": return .empty
            case "NewConnection":
                return .error(name: "org.bluez.Error.Rejected", message: "sessiond accepts its RFCOMM links itself")
            default: return .unknown
            }
        }
        do throws(BusError) {
            _ = try await bus.call(
                destination: BlueZ.service, path: "/org/bluez", interface: "org.bluez.ProfileManager1",
                member: "RegisterProfile",
                [
                    .objectPath(Self.path), .string(GATTFace.serviceUUID.lowercased()),
                    .properties([
                        ("Name", .string("LanSession")), ("Role", .string("server")),
                        ("ServiceRecord", .string(Self.serviceRecord(channel: channel))),
                        ("RequireAuthentication", .boolean(false)), ("RequireAuthorization", .boolean(false)),
                        ("AutoConnect", .boolean(false)),
                    ]),
                ])
        } catch {
            await bus.withdraw(Self.path)
            throw error
        }
        registered.withLock { $0 = true }
        logger.debug("RFCOMM service record registered with bluetoothd", metadata: ["channel": "\(channel)"])
    }

    /// Unregisters the profile (its record goes) and withdraws its object.
    public func close() async {
        if registered.withLock({ $0 }) {
            _ = try? await bus.call(
                destination: BlueZ.service, path: "/org/bluez", interface: "org.bluez.ProfileManager1",
                member: "UnregisterProfile", [.objectPath(Self.path)], timeout: .seconds(2))
        }
        await bus.withdraw(Self.path)
        registered.withLock { $0 = false }
    }
}
