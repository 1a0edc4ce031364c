import LanSession

/// What a LanSession node advertises over Bluetooth LE, and how a scanner reads it back (docs/wire-format.md, 4.3).
///
/// The advertising data holds the complete list of 128-bit service UUIDs: LanSession's service UUID alone, which a
/// phone's scan filters on, as it filters on a GATT service; no flags field. The scan response holds that UUID's service data: the
/// layout version, the node's peer id, the low byte of its LE PSM and a 24-bit tag of its session name. Both fit the 31
/// bytes of legacy advertising.
public struct LEAdvertisement: Hashable, Sendable {
    /// LanSession's 128-bit service UUID, `4C414E53-4553-5349-4F4E-0000000000A0` ("LANSESSION" in ASCII, then the
    /// number of the GATT service), most significant byte first.
    public static let serviceUUID: [UInt8] = [
        0x4C, 0x41, 0x4E, 0x53, 0x45, 0x53, 0x53, 0x49, 0x4F, 0x4E, 0x00, 0x00, 0x00, 0x00, 0x00, 0xA0,
    ]
    /// The service data's layout version.
    public static let version: UInt8 = 1
    /// The service data's size after the UUID: version, peer id, PSM, session tag.
    static let serviceDataSize = 1 + 8 + 1 + 3

    /// AD types (Bluetooth Assigned Numbers, 2.3).
    enum DataType {
        static let completeUUIDs128: UInt8 = 0x07
        static let serviceData128: UInt8 = 0x21
    }

    /// The advertiser's peer id.
    public var peerID: PeerID
    /// The LE PSM it listens on, 0x80...0xFF.
    public var psm: Int
    /// The 24-bit tag of its session name (``sessionTag(_:)``).
    public var sessionTag: UInt32

    /// Creates an advertisement.
    public init(peerID: PeerID, psm: Int, sessionTag: UInt32) {
        self.peerID = peerID
        self.psm = psm
        self.sessionTag = sessionTag & 0xFF_FFFF
    }

    /// The 24-bit tag of a session name: FNV-1a (32-bit) of its UTF-8 bytes, the low 24 bits. A filter only: the
    /// handshake compares the names themselves.
    public static func sessionTag(_ name: String) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash & 0xFF_FFFF
    }

    /// The advertising data: one AD structure, the complete list of 128-bit service UUIDs (LanSession's). No flags field
    /// (the advertisement is connectable, not discoverable): a central's bluetoothd takes a device whose flags lack "BR/EDR
    /// Not Supported" for a dual-mode one and connects over BR/EDR, where the GATT face and the LE links are not, and
    /// with flags 0x06 its LE connection failed in the lab; with none it connects over LE.
    public var advertisingData: [UInt8] {
        [17, DataType.completeUUIDs128] + Self.serviceUUID.reversed()
    }

    /// The scan response: one AD structure, LanSession's service data.
    public var scanResponse: [UInt8] {
        var data: [UInt8] = [UInt8(1 + 16 + Self.serviceDataSize), DataType.serviceData128]
        data += Self.serviceUUID.reversed()
        data.append(Self.version)
        data.appendLittleEndian(peerID.rawValue)
        data.append(UInt8(truncatingIfNeeded: psm))
        data += [UInt8(truncatingIfNeeded: sessionTag >> 16), UInt8(truncatingIfNeeded: sessionTag >> 8)]
        data.append(UInt8(truncatingIfNeeded: sessionTag))
        return data
    }

    /// Reads LanSession's service data out of advertising data (AD structures as the kernel reports them, the
    /// advertisement and its scan response joined); nil when there is none, of another version, or malformed.
    public init?(data: [UInt8]) {
        var offset = 0
        while offset < data.count {
            let length = Int(data[offset])
            guard length > 0 else { return nil }  // padding: the end
            guard offset + 1 + length <= data.count else { return nil }
            let structure = data[(offset + 1)..<(offset + 1 + length)]
            offset += 1 + length
            guard structure.first == DataType.serviceData128, structure.count == 1 + 16 + Self.serviceDataSize else {
                continue
            }
            let body = Array(structure.dropFirst())
            guard Array(body[0..<16].reversed()) == Self.serviceUUID, body[16] == Self.version else { continue }
            var id: UInt64 = 0
            for (shift, byte) in body[17..<25].enumerated() { id |= UInt64(byte) << (8 * UInt64(shift)) }
            let psm = Int(body[25])
            guard L2CAPTransport.psms.contains(psm) else { return nil }
            self.init(
                peerID: PeerID(id), psm: psm,
                sessionTag: UInt32(body[26]) << 16 | UInt32(body[27]) << 8 | UInt32(body[28]))
            return
        }
        return nil
    }

    /// A Bluetooth address in the kernel's byte order (least significant first) as text, most significant first.
    static func addressText(_ bytes: [UInt8]) -> String {
        bytes.reversed().map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: ":")
    }
}
