/// A UUID of the attribute protocol: an attribute's type, a service or a characteristic (Bluetooth Core, Vol 3,
/// Part B, 2.5.1).
///
/// Kept as its 128 bits in the order the UUID is written. A UUID built on the Bluetooth Base UUID
/// (0000xxxx-0000-1000-8000-00805F9B34FB) also has a 16-bit form, which is the one attribute PDUs carry; every other
/// UUID goes as all 16 bytes. Either way the bytes go little-endian, the UUID's last byte first.
struct GATTUUID: Hashable, Sendable, CustomStringConvertible {
    /// The Bluetooth Base UUID, the 16-bit forms' bits left at zero, as written.
    static let base: [UInt8] = [
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB,
    ]

    /// The 16 bytes, most significant first (as written).
    let bytes: [UInt8]

    /// A 16-bit UUID on the Bluetooth Base UUID.
    init(_ short: UInt16) {
        var bytes = Self.base
        bytes[2] = UInt8(short >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: short)
        self.bytes = bytes
    }

    /// The 16 bytes, most significant first.
    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// One of LanSession's UUIDs, 4C414E53-4553-5349-4F4E-0000000000xx ("LANSESSION" in ASCII, then `last`).
    init(lanSession last: UInt8) {
        bytes = Array("LANSESSION".utf8) + [0, 0, 0, 0, 0, last]
    }

    /// Parses "4C414E53-4553-5349-4F4E-0000000000A0" (hex digits in either case, dashes anywhere); nil when it does
    /// not hold exactly 32 hex digits.
    init?(_ text: String) {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text.utf8 where character != UInt8(ascii: "-") {
            guard let digit = Self.hexDigit(character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
        guard bytes.count == 16, high == nil else { return nil }
        self.bytes = bytes
    }

    /// Reads a UUID as an attribute PDU carries it: 2 or 16 bytes, little-endian; nil for any other length.
    init?(pdu: ArraySlice<UInt8>) {
        switch pdu.count {
        case 2: self.init(UInt16(pdu[pdu.startIndex]) | UInt16(pdu[pdu.startIndex + 1]) << 8)
        case 16: self.init(bytes: pdu.reversed())
        default: return nil
        }
    }

    /// The 16-bit form, when the UUID is on the Bluetooth Base UUID.
    var short: UInt16? {
        guard bytes[0...1] == [0, 0], bytes[4...] == Self.base[4...] else { return nil }
        return UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    }

    /// The bytes an attribute PDU carries: the 16-bit form when there is one, else all 16, little-endian.
    var pdu: [UInt8] {
        if let short { return [UInt8(truncatingIfNeeded: short), UInt8(short >> 8)] }
        return bytes.reversed()
    }

    /// As written: "4C414E53-4553-5349-4F4E-0000000000A0".
    var description: String {
        let digits = Array("0123456789ABCDEF")
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append("-") }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    private static func hexDigit(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension GATTUUID {
    /// «Primary Service», the type of a service's declaration.
    static let primaryService = GATTUUID(0x2800)
    /// «Secondary Service»: a grouping type too, of which this server has none.
    static let secondaryService = GATTUUID(0x2801)
    /// «Characteristic», the type of a characteristic's declaration.
    static let characteristic = GATTUUID(0x2803)
    /// «Client Characteristic Configuration», the descriptor a central writes to subscribe.
    static let clientConfiguration = GATTUUID(0x2902)
    /// «Generic Access», the service every GATT server on LE has.
    static let genericAccess = GATTUUID(0x1800)
    /// «Device Name» of Generic Access.
    static let deviceName = GATTUUID(0x2A00)
    /// «Appearance» of Generic Access.
    static let appearance = GATTUUID(0x2A01)
}
