import DBusClient
import LanSessionLE
import Logging
import Synchronization

/// LE discovery through bluetoothd where it runs: the adapter's discovery (`org.bluez.Adapter1`), filtered on
/// LanSession's service UUID, LE only, every advertisement reported (`DuplicateData`), so that bluetoothd merges it
/// with any other client's discovery instead of the kernel refusing a second scan. The devices it reports with
/// LanSession's service data become ``LESighting``s for ``LEDiscovery``, which then only advertises.
public final class BlueZLEScanner: Sendable {
    /// The adapter it scans on (`hci1`).
    public let adapter: String
    private let bus: BusConnection
    private let logger: Logger
    private let state = Mutex<(added: AsyncStream<BusSignal>, changed: AsyncStream<BusSignal>)?>(nil)

    private var adapterPath: String { BlueZ.adapterPath(adapter) }

    public init(bus: BusConnection, adapter: String, logger: Logger) {
        self.bus = bus
        self.adapter = adapter
        self.logger = logger
    }

    /// Starts the adapter's discovery, filtered on LanSession's service UUID; ``run(reporting:)`` then reports what it
    /// sees. Fails with bluetoothd's error when it refuses the filter or the discovery.
    public func start() async throws(BusError) {
        // Signals first, so that nothing reported between the start and the subscription is missed.
        let added = try await bus.signals(
            sender: BlueZ.service, interface: BlueZ.objectManager, member: "InterfacesAdded")
        let changed = try await bus.signals(
            sender: BlueZ.service, interface: BlueZ.properties, member: "PropertiesChanged")
        state.withLock { $0 = (added, changed) }
        _ = try await bus.call(
            destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "SetDiscoveryFilter",
            [
                .properties([
                    ("UUIDs", .strings([GATTFace.serviceUUID.lowercased()])), ("Transport", .string("le")),
                    ("DuplicateData", .boolean(true)),
                ])
            ])
        _ = try await bus.call(
            destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "StartDiscovery")
        logger.debug("bluetoothd's LE discovery started", metadata: ["adapter": "\(adapter)"])
    }

    /// Reports, to `continuation`, each advertisement with LanSession's service data that the discovery sees, until the
    /// task is cancelled or the bus closes; then stops the discovery and finishes the stream. Call after ``start()``.
    public func run(reporting continuation: AsyncStream<LESighting>.Continuation) async {
        defer { continuation.finish() }
        guard let (added, changed) = state.withLock({ $0 }) else { return }
        let prefix = adapterPath + "/dev_"
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await signal in added {
                    guard let path = signal.arguments.first?.stringValue, path.hasPrefix(prefix),
                        case .dictionary(_, _, let interfaces) = signal.arguments.dropFirst().first,
                        let device = interfaces.first(where: { $0.key.stringValue == BlueZ.device })?.value
                            .propertiesValue,
                        let sighting = Self.sighting(device, publicAddress: nil)
                    else { continue }
                    continuation.yield(sighting)
                }
            }
            group.addTask { [bus] in
                // A PropertiesChanged does not repeat the address type: asked once per device.
                var publicAddresses: [String: Bool] = [:]
                for await signal in changed {
                    guard signal.path.hasPrefix(prefix), signal.arguments.first?.stringValue == BlueZ.device,
                        var device = signal.arguments.dropFirst().first?.propertiesValue, device["ServiceData"] != nil
                    else { continue }
                    device["Address"] = .string(
                        signal.path.dropFirst(prefix.count).replacingOccurrences(of: "_", with: ":"))
                    if publicAddresses[signal.path] == nil {
                        let type = try? await bus.call(
                            destination: BlueZ.service, path: signal.path, interface: BlueZ.properties,
                            member: "Get", [.string(BlueZ.device), .string("AddressType")])
                        publicAddresses[signal.path] = type?.first?.stringValue == "public"
                    }
                    if let sighting = Self.sighting(device, publicAddress: publicAddresses[signal.path]) {
                        continuation.yield(sighting)
                    }
                }
            }
        }
        _ = try? await bus.call(
            destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "StopDiscovery",
            timeout: .seconds(2))
        logger.debug("bluetoothd's LE discovery stopped", metadata: ["adapter": "\(adapter)"])
    }

    /// A sighting out of a `Device1`'s properties: its address, whether it is public (`AddressType`, or
    /// `publicAddress` when the properties do not say), and LanSession's service data; nil without them.
    static func sighting(_ device: [String: BusValue], publicAddress: Bool?) -> LESighting? {
        guard let address = device["Address"]?.stringValue,
            case .dictionary(_, _, let entries) = device["ServiceData"],
            let data = entries.first(where: {
                $0.key.stringValue?.lowercased() == GATTFace.serviceUUID.lowercased()
            })?.value.bytesValue
        else { return nil }
        let isPublic = device["AddressType"]?.stringValue.map { $0 == "public" } ?? publicAddress ?? false
        return LESighting(address: address.uppercased(), isPublic: isPublic, serviceData: data)
    }
}
