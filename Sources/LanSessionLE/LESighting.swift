import LanSession

/// A device's LanSession advertisement as another scanner than the management socket reports it (bluetoothd's
/// discovery): its address and the service data of LanSession's UUID (docs/wire-format.md 4.3).
public struct LESighting: Hashable, Sendable {
    /// The device's address, "AA:BB:CC:DD:EE:FF".
    public var address: String
    /// Whether the address is the controller's public one (links go to public addresses only).
    public var isPublic: Bool
    /// The service data after the UUID: version, peer id, PSM, session tag.
    public var serviceData: [UInt8]

    public init(address: String, isPublic: Bool, serviceData: [UInt8]) {
        self.address = address
        self.isPublic = isPublic
        self.serviceData = serviceData
    }

    /// The same report as the management socket's Device Found: the address least significant byte first, its type,
    /// and the service data as the AD structure that carries it. Nil for an address that is not six bytes of hex.
    var event: ManagementPacket.Event? {
        let bytes = address.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        guard bytes.count == 6 else { return nil }
        let structure =
            [UInt8(1 + 16 + serviceData.count), LEAdvertisement.DataType.serviceData128]
            + LEAdvertisement.serviceUUID.reversed() + serviceData
        return .deviceFound(
            address: bytes.reversed(),
            addressType: isPublic ? ManagementPacket.AddressType.lePublic : ManagementPacket.AddressType.leRandom,
            rssi: 0, data: structure)
    }
}
