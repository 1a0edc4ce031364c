import DBusClient
import LanSession
import LanSessionLE
import Logging
import Synchronization
import WireCodec

/// The GATT face of docs/wire-format.md 4.2 where bluetoothd runs: LanSession's service and its three
/// characteristics as a GATT application registered with bluetoothd (`org.bluez.GattManager1`), which serves them,
/// with its own Generic Access and Generic Attribute services, to every central of the adapter.
///
/// The same UUIDs, values and errors as the face that serves ATT itself (``GATTFace``): the identity reads the
/// identity text; a write of the command goes to the application's ``GATTCommandTaker``, and one it refuses with
/// `org.bluez.Error.Failed`, which bluetoothd answers with ATT error 0x80; the events characteristic notifies one
/// event of the application per notification and reads the last. The handles are bluetoothd's: centrals discover them
/// by UUID. The objects answer on the bus connection's thread; commands go to the application there (it must not
/// block).
public final class BlueZGATTFace: Sendable {
    /// Where the application's objects live on the bus.
    static let root = "/org/lansession/gatt"
    static let servicePath = root + "/service0"
    static let identityPath = servicePath + "/identity"
    static let commandPath = servicePath + "/command"
    static let eventsPath = servicePath + "/events"

    /// The adapter it serves on (`hci0`).
    public let adapter: String
    /// What the identity characteristic reads.
    public let identity: [UInt8]
    private let bus: BusConnection
    private let logger: Logger
    private let commands: GATTCommandTaker
    private let state = Mutex(State())

    private struct State {
        /// The last event notified: what the events characteristic reads.
        var lastEvent: [UInt8] = []
        /// bluetoothd asked for notifications (a central subscribed).
        var notifying = false
        var registered = false
        /// Changes of owner of bluetoothd's name, from before the first registration, for ``keepRegistered()``.
        var owners: AsyncStream<BusSignal>?
    }

    /// A face on `adapter` (its name, `hci1`) through `bus`, the system bus bluetoothd is on. `identity` is the
    /// identity text (``GATTFace/identityText(peer:name:session:fingerprint:)``); at most 512 bytes of it are kept.
    /// `commands` takes each value a central writes to the command characteristic.
    public init(
        bus: BusConnection, adapter: String, identity: String, logger: Logger, commands: @escaping GATTCommandTaker
    ) {
        self.bus = bus
        self.adapter = adapter
        self.identity = Array(identity.utf8.prefix(GATTFace.maxValueLength))
        self.logger = logger
        self.commands = commands
    }

    /// Exports the application's objects and registers them with bluetoothd on the adapter. Fails with bluetoothd's
    /// error (no such adapter, the adapter has no GATT manager) or the bus's.
    public func start() async throws(BusError) {
        let owners = try await bus.signals(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged")
        try await bus.export(Self.root) { [self] call in answer(call) }
        do throws(BusError) {
            try await register()
        } catch {
            await bus.withdraw(Self.root)
            throw error
        }
        state.withLock { $0.owners = owners }
    }

    /// Registers the application again each time bluetoothd comes back (a restart of bluetoothd forgets every
    /// application), until the task is cancelled. Call after ``start()``.
    public func keepRegistered() async {
        guard let owners = state.withLock({ $0.owners }) else { return }
        for await change in owners {
            guard change.arguments.first?.stringValue == BlueZ.service, let owner = change.arguments.last?.stringValue
            else { continue }
            guard !owner.isEmpty else {
                state.withLock { state in
                    state.registered = false
                    state.notifying = false
                }
                logger.debug("bluetoothd left the bus: the GATT application waits for it")
                continue
            }
            // bluetoothd takes its name before its adapters appear: it is asked again until the adapter takes the
            // application, for as long as it keeps the name.
            for attempt in 1...Self.registrationAttempts {
                do throws(BusError) {
                    try await register()
                    break
                } catch {
                    logger.debug(
                        "bluetoothd is back but took no GATT application yet",
                        metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                }
                try? await Task.sleep(for: Self.registrationRetry)
                guard !Task.isCancelled else { return }
            }
        }
    }

    /// The message of the error that refuses a write of no command: the ATT error code bluetoothd answers with.
    static let notACommand = "0x80"

    /// How often, and how long apart, a bluetoothd that came back is asked to take the application.
    static let registrationAttempts = 50
    static let registrationRetry = Duration.milliseconds(200)

    private func register() async throws(BusError) {
        _ = try await bus.call(
            destination: BlueZ.service, path: BlueZ.adapterPath(adapter), interface: BlueZ.gattManager,
            member: "RegisterApplication", [.objectPath(Self.root), .properties([])])
        state.withLock { $0.registered = true }
        logger.debug("GATT application registered with bluetoothd", metadata: ["adapter": "\(adapter)"])
    }

    /// Notifies `payload` (one event of the application) to the centrals that subscribed (bluetoothd sends it to each),
    /// and makes it what the events characteristic reads.
    public func notify(_ payload: [UInt8]) {
        let notifying = state.withLock { state in
            state.lastEvent = payload
            return state.notifying
        }
        guard notifying else { return }
        bus.emitPropertiesChanged(
            path: Self.eventsPath, interface: BlueZ.gattCharacteristic, [("Value", .bytes(payload))])
    }

    /// Unregisters the application and withdraws its objects.
    public func close() async {
        if state.withLock({ $0.registered }) {
            _ = try? await bus.call(
                destination: BlueZ.service, path: BlueZ.adapterPath(adapter), interface: BlueZ.gattManager,
                member: "UnregisterApplication", [.objectPath(Self.root)], timeout: .seconds(2))
        }
        await bus.withdraw(Self.root)
        state.withLock { $0.registered = false }
    }

    // MARK: - The objects

    /// The properties of the objects, by path and interface.
    private func objects() -> [(path: String, interface: String, properties: [(String, BusValue)])] {
        let notifying = state.withLock { $0.notifying }
        func characteristic(
            _ uuid: String, _ flags: [String], _ extra: [(String, BusValue)] = []
        ) -> [(
            String, BusValue
        )] {
            [("UUID", .string(uuid)), ("Service", .objectPath(Self.servicePath)), ("Flags", .strings(flags))] + extra
        }
        return [
            (
                Self.servicePath, BlueZ.gattService,
                [
                    ("UUID", .string(GATTFace.serviceUUID)), ("Primary", .boolean(true)),
                    ("Includes", .array(element: "o", [])),
                ]
            ),
            (Self.identityPath, BlueZ.gattCharacteristic, characteristic(GATTFace.identityUUID, ["read"])),
            (
                Self.commandPath, BlueZ.gattCharacteristic,
                characteristic(GATTFace.commandUUID, ["write-without-response", "write"])
            ),
            (
                Self.eventsPath, BlueZ.gattCharacteristic,
                characteristic(GATTFace.eventsUUID, ["read", "notify"], [("Notifying", .boolean(notifying))])
            ),
        ]
    }

    /// Answers a method call to one of the objects; on the bus's thread.
    private func answer(_ call: BusMethodCall) -> BusReply {
        if call.path == Self.root {
            guard call.interface == BlueZ.objectManager, call.member == "GetManagedObjects" else { return .unknown }
            let entries = objects().map { object in
                BusValue.DictionaryEntry(
                    .objectPath(object.path),
                    .dictionary(
                        key: "s", value: "a{sv}",
                        [.init(.string(object.interface), .properties(object.properties))]))
            }
            return .values([.dictionary(key: "o", value: "a{sa{sv}}", entries)])
        }
        guard let object = objects().first(where: { $0.path == call.path }) else { return .unknown }
        if let reply = BlueZ.answerProperties(call, interface: object.interface, object.properties) { return reply }
        guard call.interface == BlueZ.gattCharacteristic else { return .unknown }
        switch call.member {
        case "ReadValue": return read(call)
        case "WriteValue": return write(call)
        case "StartNotify", "StopNotify":
            guard call.path == Self.eventsPath else {
                return .error(name: BlueZ.Error.notSupported, message: "only the events characteristic notifies")
            }
            let start = call.member == "StartNotify"
            state.withLock { $0.notifying = start }
            bus.emitPropertiesChanged(
                path: Self.eventsPath, interface: BlueZ.gattCharacteristic, [("Notifying", .boolean(start))])
            logger.debug(start ? "a central subscribed to the events" : "no central follows the events")
            return .empty
        default:
            return .unknown
        }
    }

    private func read(_ call: BusMethodCall) -> BusReply {
        let value: [UInt8]
        switch call.path {
        case Self.identityPath: value = identity
        case Self.eventsPath: value = state.withLock { $0.lastEvent }
        default: return .error(name: BlueZ.Error.notPermitted, message: "the command characteristic is not read")
        }
        let offset = call.arguments.first?.propertiesValue?["offset"]?.integerValue ?? 0
        guard offset <= value.count else {
            return .error(name: BlueZ.Error.invalidOffset, message: "offset \(offset) past \(value.count) bytes")
        }
        return .values([.bytes(Array(value[offset...]))])
    }

    private func write(_ call: BusMethodCall) -> BusReply {
        guard call.path == Self.commandPath else {
            return .error(name: BlueZ.Error.notPermitted, message: "only the command characteristic is written")
        }
        guard let value = call.arguments.first?.bytesValue else {
            return .error(name: BlueZ.Error.invalidArguments, message: "WriteValue takes the value as bytes")
        }
        let offset = call.arguments.dropFirst().first?.propertiesValue?["offset"]?.integerValue ?? 0
        guard offset == 0 else {
            return .error(name: BlueZ.Error.failed, message: "a command is written whole, at offset 0")
        }
        do throws(GATTNotACommand) {
            try commands(value)
            return .empty
        } catch {
            logger.debug("a central wrote no command", metadata: ["reason": "\(error.reason)"])
            // bluetoothd answers Failed with the ATT error its message names (0x80...0x9F), 0x80 when it names none.
            return .error(name: BlueZ.Error.failed, message: Self.notACommand)
        }
    }
}
