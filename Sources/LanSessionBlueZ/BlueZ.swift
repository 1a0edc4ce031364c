import DBusClient

/// Names of BlueZ's D-Bus API (doc/*-api.txt of BlueZ 5.66, Debian 12's).
enum BlueZ {
    static let service = "org.bluez"
    static let gattManager = "org.bluez.GattManager1"
    static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    static let gattService = "org.bluez.GattService1"
    static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    static let advertisement = "org.bluez.LEAdvertisement1"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"

    /// Errors an application's object answers with; bluetoothd turns them into ATT errors: `Failed` into 0x80 (the
    /// application error), `NotPermitted` into the request's own "not permitted", `InvalidOffset` into 0x07.
    enum Error {
        static let failed = "org.bluez.Error.Failed"
        static let notPermitted = "org.bluez.Error.NotPermitted"
        static let invalidOffset = "org.bluez.Error.InvalidOffset"
        static let notSupported = "org.bluez.Error.NotSupported"
        static let invalidArguments = "org.bluez.Error.InvalidArguments"
    }

    /// The D-Bus path of adapter `name` (`hci1` → `/org/bluez/hci1`).
    static func adapterPath(_ name: String) -> String { "/org/bluez/\(name)" }

    /// The answer to `org.freedesktop.DBus.Properties` calls on an object whose interface `interface` has
    /// `properties`; nil for any other call.
    static func answerProperties(
        _ call: BusMethodCall, interface: String, _ properties: [(String, BusValue)]
    ) -> BusReply? {
        guard call.interface == Self.properties else { return nil }
        switch call.member {
        case "GetAll":
            guard call.arguments.first?.stringValue == interface else { return .values([.properties([])]) }
            return .values([.properties(properties)])
        case "Get":
            guard call.arguments.first?.stringValue == interface, let name = call.arguments.last?.stringValue,
                let value = properties.first(where: { $0.0 == name })?.1
            else {
                return .error(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "no such property")
            }
            return .values([.variant(value)])
        case "Set":
            return .error(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "read-only properties")
        default:
            return .unknown
        }
    }
}
