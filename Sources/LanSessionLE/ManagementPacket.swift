/// The packets of the Linux kernel's Bluetooth management interface (BlueZ's doc/mgmt-api.txt): what bluetoothd
/// itself speaks to the kernel, on a raw HCI socket bound to the control channel (`HCI_CHANNEL_CONTROL`).
///
/// Every packet is a 6-byte header (`u16le` opcode or event code, `u16le` controller index, `u16le` parameter length)
/// and its parameters, all little-endian. A socket carries one packet per read and per write. Only what LE
/// discovery needs is here: four commands, and the events that answer them or report a device.
enum ManagementPacket {
    /// The header's size.
    static let headerSize = 6
    /// "No controller": the index of commands and events that concern none.
    static let noController: UInt16 = 0xFFFF

    /// The commands LE discovery sends.
    enum Command: Hashable, Sendable {
        /// Read Advertising Features (0x003D): the controller's advertising limits and instances in use.
        case readAdvertisingFeatures
        /// Add Advertising (0x003E): advertise `data` (and `scanResponse` to active scanners) as `instance`, with
        /// `flags` (``AdvertisingFlags``), until removed.
        case addAdvertising(instance: UInt8, flags: UInt32, data: [UInt8], scanResponse: [UInt8])
        /// Remove Advertising (0x003F).
        case removeAdvertising(instance: UInt8)
        /// Start Discovery (0x0023) of the given address types (``AddressTypes``).
        case startDiscovery(addressTypes: UInt8)
        /// Stop Discovery (0x0024).
        case stopDiscovery(addressTypes: UInt8)

        /// The command's opcode.
        var opcode: UInt16 {
            switch self {
            case .readAdvertisingFeatures: 0x003D
            case .addAdvertising: 0x003E
            case .removeAdvertising: 0x003F
            case .startDiscovery: 0x0023
            case .stopDiscovery: 0x0024
            }
        }

        /// The packet for controller `index`.
        func encoded(index: UInt16) -> [UInt8] {
            var parameters: [UInt8] = []
            switch self {
            case .readAdvertisingFeatures:
                break
            case .addAdvertising(let instance, let flags, let data, let scanResponse):
                parameters.append(instance)
                parameters.appendLittleEndian(flags)
                parameters.appendLittleEndian(UInt16(0))  // duration: the controller's default
                parameters.appendLittleEndian(UInt16(0))  // timeout: none, until removed
                parameters.append(UInt8(data.count))
                parameters.append(UInt8(scanResponse.count))
                parameters += data + scanResponse
            case .removeAdvertising(let instance):
                parameters.append(instance)
            case .startDiscovery(let types), .stopDiscovery(let types):
                parameters.append(types)
            }
            var packet: [UInt8] = []
            packet.reserveCapacity(ManagementPacket.headerSize + parameters.count)
            packet.appendLittleEndian(opcode)
            packet.appendLittleEndian(index)
            packet.appendLittleEndian(UInt16(parameters.count))
            return packet + parameters
        }
    }

    /// Add Advertising's flags.
    enum AdvertisingFlags {
        /// Connectable advertising (ADV_IND), whatever the controller's connectable setting.
        static let connectable: UInt32 = 1 << 0
        /// The kernel adds the flags field, general discoverable (not used: see LEAdvertisement).
        static let discoverable: UInt32 = 1 << 1
    }

    /// Start Discovery's address types.
    enum AddressTypes {
        /// LE public and LE random addresses (bits 1 and 2): an LE scan only.
        static let le: UInt8 = 0b110
    }

    /// A device's address type in events.
    enum AddressType {
        static let lePublic: UInt8 = 1
        static let leRandom: UInt8 = 2
    }

    /// Command statuses (mgmt-api.txt, "Error Codes"), for messages.
    static func statusText(_ status: UInt8) -> String {
        let names: [UInt8: String] = [
            0x00: "success", 0x01: "unknown command", 0x03: "failed", 0x07: "no resources", 0x08: "timeout",
            0x0A: "busy", 0x0B: "rejected", 0x0C: "not supported", 0x0D: "invalid parameters", 0x0F: "not powered",
            0x10: "cancelled", 0x11: "invalid index", 0x12: "RF-killed", 0x14: "permission denied",
        ]
        return names[status].map { "\($0) (0x\(String(status, radix: 16)))" } ?? "status 0x\(String(status, radix: 16))"
    }

    /// Status 0x0A: the controller is busy (a connection being made, a scan of someone else).
    static let busy: UInt8 = 0x0A
    /// Status 0x14: the socket lacks CAP_NET_ADMIN.
    static let permissionDenied: UInt8 = 0x14

    /// The events LE discovery reads.
    enum Event: Hashable, Sendable {
        /// Command Complete (0x0001): the command `opcode` ended with `status`, returning `parameters`.
        case commandComplete(opcode: UInt16, status: UInt8, parameters: [UInt8])
        /// Command Status (0x0002): the command `opcode` failed (or is pending) with `status`.
        case commandStatus(opcode: UInt16, status: UInt8)
        /// Device Found (0x0012): an advertisement (with its scan response, when the kernel joined them).
        case deviceFound(address: [UInt8], addressType: UInt8, rssi: Int8, data: [UInt8])
        /// Discovering (0x0013): discovery started (true) or stopped (false).
        case discovering(Bool)
        /// Any other event, by its code.
        case other(code: UInt16)

        /// Reads one packet of controller `index`; nil for another controller's or a malformed one.
        init?(_ packet: some Collection<UInt8>, index: UInt16) {
            let bytes = Array(packet)
            guard bytes.count >= ManagementPacket.headerSize else { return nil }
            let code = bytes.littleEndianUInt16(at: 0)
            let packetIndex = bytes.littleEndianUInt16(at: 2)
            let length = Int(bytes.littleEndianUInt16(at: 4))
            guard bytes.count == ManagementPacket.headerSize + length else { return nil }
            guard packetIndex == index || packetIndex == ManagementPacket.noController else { return nil }
            let parameters = Array(bytes[ManagementPacket.headerSize...])
            switch code {
            case 0x0001:
                guard parameters.count >= 3 else { return nil }
                self = .commandComplete(
                    opcode: parameters.littleEndianUInt16(at: 0), status: parameters[2],
                    parameters: Array(parameters[3...]))
            case 0x0002:
                guard parameters.count == 3 else { return nil }
                self = .commandStatus(opcode: parameters.littleEndianUInt16(at: 0), status: parameters[2])
            case 0x0012:
                guard parameters.count >= 14 else { return nil }
                let dataLength = Int(parameters.littleEndianUInt16(at: 12))
                guard parameters.count == 14 + dataLength else { return nil }
                self = .deviceFound(
                    address: Array(parameters[0..<6]), addressType: parameters[6],
                    rssi: Int8(bitPattern: parameters[7]), data: Array(parameters[14...]))
            case 0x0013:
                guard parameters.count == 2 else { return nil }
                self = .discovering(parameters[1] != 0)
            default:
                self = .other(code: code)
            }
        }
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<Value: FixedWidthInteger>(_ value: Value) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    func littleEndianUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }
}
