/// The server side of the Attribute Protocol (Bluetooth Core, Vol 3, Part F) on one central's ATT bearer, over the
/// GATT database of the LE GATT face (Vol 3, Part G; docs/wire-format.md 4.2). A plain value without I/O: each PDU the
/// central sends goes in through ``receive(_:)``, which says what to do; ``notify(_:)`` makes a notification. A value
/// written to the command characteristic goes to the application behind the face, which takes it or says it is none.
///
/// The database has fixed handles (``Handle``): Generic Access with the device's name, then LanSession's service with
/// the identity (read), command (write, write without response) and events (read, notify) characteristics, and the
/// events' Client Characteristic Configuration. A central's subscription and its ATT_MTU belong to this value, one per
/// bearer. Malformed PDUs get an Error Response (Invalid PDU); unknown requests Request Not Supported; unknown commands
/// (opcode bit 6 set) are ignored, as the protocol asks.
struct ATTServer: Sendable {
    /// What to do with a PDU received.
    enum Action: Hashable, Sendable {
        /// Nothing: a command without effect, or one this server ignores.
        case none
        /// Send `response` back.
        case respond([UInt8])
        /// The central wrote a command, which the application took (its ``GATTCommandTaker``); send `response` back
        /// when there is one (for a Write Request; a Write Command has none).
        case command([UInt8], response: [UInt8]?)
        /// The PDU was refused; send `response` back when there is one (the Error Response to a request; a command
        /// gets none).
        case refused(ATTError, response: [UInt8]?)
    }

    /// The opcodes this server knows (Vol 3, Part F, 3.4.8).
    enum Opcode: UInt8 {
        case errorResponse = 0x01
        case exchangeMTURequest = 0x02
        case exchangeMTUResponse = 0x03
        case findInformationRequest = 0x04
        case findInformationResponse = 0x05
        case findByTypeValueRequest = 0x06
        case findByTypeValueResponse = 0x07
        case readByTypeRequest = 0x08
        case readByTypeResponse = 0x09
        case readRequest = 0x0A
        case readResponse = 0x0B
        case readBlobRequest = 0x0C
        case readBlobResponse = 0x0D
        case readByGroupTypeRequest = 0x10
        case readByGroupTypeResponse = 0x11
        case writeRequest = 0x12
        case writeResponse = 0x13
        case handleValueNotification = 0x1B
        case handleValueConfirmation = 0x1E
        case writeCommand = 0x52
        /// Set in every command's opcode: a command gets no response, and an unknown one is ignored.
        static let commandFlag: UInt8 = 0x40
    }

    /// The fixed handles of the database.
    enum Handle {
        /// «Primary Service» Generic Access (0x1800), handles 0x0001...0x0005.
        static let genericAccess: UInt16 = 0x0001
        static let deviceNameDeclaration: UInt16 = 0x0002
        /// Device Name (0x2A00): read.
        static let deviceName: UInt16 = 0x0003
        static let appearanceDeclaration: UInt16 = 0x0004
        /// Appearance (0x2A01): read, 0 (unknown).
        static let appearance: UInt16 = 0x0005
        /// «Primary Service» LanSession, handles 0x0006...0x000D.
        static let service: UInt16 = 0x0006
        static let identityDeclaration: UInt16 = 0x0007
        /// The identity text: read.
        static let identity: UInt16 = 0x0008
        static let commandDeclaration: UInt16 = 0x0009
        /// The command: write, write without response.
        static let command: UInt16 = 0x000A
        static let eventsDeclaration: UInt16 = 0x000B
        /// The events: read (the last event), notify.
        static let events: UInt16 = 0x000C
        /// The events' Client Characteristic Configuration: read, write.
        static let eventsConfiguration: UInt16 = 0x000D
    }

    /// Characteristic properties (Vol 3, Part G, 3.3.1.1).
    enum Property {
        static let read: UInt8 = 0x02
        static let writeWithoutResponse: UInt8 = 0x04
        static let write: UInt8 = 0x08
        static let notify: UInt8 = 0x10
    }

    /// One attribute of the database.
    struct Attribute: Sendable {
        /// Its handle.
        var handle: UInt16
        /// Its type.
        var type: GATTUUID
        /// Its value, for those the database holds (the events and their configuration are the server's own).
        var value: [UInt8]
        /// Whether a central may read it.
        var readable: Bool
        /// Whether a central may write it.
        var writable = false
        /// For a service's declaration, the last handle of the service.
        var groupEnd: UInt16?
    }

    /// The ATT_MTU before any exchange (`attDefaultMTU`).
    static let defaultMTU = 23
    /// The Server Rx MTU this server announces (`attServerMTU`): the largest PDU it takes.
    static let serverMTU = 517
    /// The longest attribute value (`attMaxValueLength`, Vol 3, Part F, 3.2.9).
    static let maxValueLength = 512
    /// The name a Device Name carries unless told otherwise.
    static let defaultDeviceName = "LanSession"

    /// LanSession's service, 4C414E53-4553-5349-4F4E-0000000000A0.
    static let serviceUUID = GATTUUID(lanSession: 0xA0)
    /// The identity characteristic, …A1.
    static let identityUUID = GATTUUID(lanSession: 0xA1)
    /// The command characteristic, …A2.
    static let commandUUID = GATTUUID(lanSession: 0xA2)
    /// The events characteristic, …A3.
    static let eventsUUID = GATTUUID(lanSession: 0xA3)

    /// The bit of the configuration that asks for notifications.
    static let notificationsEnabled: UInt16 = 0x0001

    /// The ATT_MTU of the bearer: 23 until the central exchanges MTUs.
    private(set) var mtu = ATTServer.defaultMTU
    /// The events' Client Characteristic Configuration the central wrote.
    private(set) var configuration: UInt16 = 0
    /// The last event given to ``notify(_:)``: the events characteristic's value.
    private var lastEvent: [UInt8] = []
    /// The database, in handle order, handles from 1 without gaps.
    let attributes: [Attribute]
    /// The application's reading of a value written to the command characteristic.
    private let takeCommand: GATTCommandTaker

    /// Whether the central asked for notifications of the events.
    var notifying: Bool { configuration & Self.notificationsEnabled != 0 }

    /// A server whose identity characteristic reads `identity` and whose Device Name is `deviceName`, each as UTF-8
    /// cut to ``maxValueLength`` bytes, and whose command characteristic's writes go to `commands`.
    init(
        identity: String, deviceName: String = ATTServer.defaultDeviceName,
        commands: @escaping GATTCommandTaker
    ) {
        takeCommand = commands
        func declaration(_ properties: UInt8, _ handle: UInt16, _ uuid: GATTUUID) -> Attribute {
            Attribute(
                handle: handle - 1, type: .characteristic, value: [properties] + Self.bytes(handle) + uuid.pdu,
                readable: true)
        }
        attributes = [
            Attribute(
                handle: Handle.genericAccess, type: .primaryService, value: GATTUUID.genericAccess.pdu, readable: true,
                groupEnd: Handle.appearance),
            declaration(Property.read, Handle.deviceName, .deviceName),
            Attribute(handle: Handle.deviceName, type: .deviceName, value: Self.cut(deviceName), readable: true),
            declaration(Property.read, Handle.appearance, .appearance),
            Attribute(handle: Handle.appearance, type: .appearance, value: [0, 0], readable: true),
            Attribute(
                handle: Handle.service, type: .primaryService, value: Self.serviceUUID.pdu, readable: true,
                groupEnd: Handle.eventsConfiguration),
            declaration(Property.read, Handle.identity, Self.identityUUID),
            Attribute(handle: Handle.identity, type: Self.identityUUID, value: Self.cut(identity), readable: true),
            declaration(Property.writeWithoutResponse | Property.write, Handle.command, Self.commandUUID),
            Attribute(handle: Handle.command, type: Self.commandUUID, value: [], readable: false, writable: true),
            declaration(Property.read | Property.notify, Handle.events, Self.eventsUUID),
            Attribute(handle: Handle.events, type: Self.eventsUUID, value: [], readable: true),
            Attribute(
                handle: Handle.eventsConfiguration, type: .clientConfiguration, value: [], readable: true,
                writable: true),
        ]
    }

    // MARK: - Input

    /// Takes one PDU the central sent and says what to do.
    mutating func receive(_ pdu: [UInt8]) -> Action {
        guard let opcode = pdu.first else {
            return refuse(ATTError(.invalidPDU, request: 0, "an empty PDU"))
        }
        do throws(ATTError) {
            switch Opcode(rawValue: opcode) {
            case .exchangeMTURequest: return try exchangeMTU(pdu)
            case .findInformationRequest: return try findInformation(pdu)
            case .findByTypeValueRequest: return try findByTypeValue(pdu)
            case .readByTypeRequest: return try readByType(pdu)
            case .readRequest: return try read(pdu)
            case .readBlobRequest: return try readBlob(pdu)
            case .readByGroupTypeRequest: return try readByGroupType(pdu)
            case .writeRequest, .writeCommand: return try write(pdu)
            case .handleValueConfirmation: return .none  // this server sends no indications to confirm
            default:
                guard opcode & Opcode.commandFlag == 0 else { return .none }  // an unknown command
                throw ATTError(.requestNotSupported, request: opcode, "opcode 0x\(String(opcode, radix: 16))")
            }
        } catch {
            return refuse(error)
        }
    }

    /// The Handle Value Notification of `value` on the events characteristic, cut to ATT_MTU − 3 bytes; nil when the
    /// central has not enabled notifications. The value (cut to ``maxValueLength``) becomes the events
    /// characteristic's, so that a central may read a long one whole.
    mutating func notify(_ value: [UInt8]) -> [UInt8]? {
        lastEvent = Self.cut(value)
        guard notifying else { return nil }
        return [Opcode.handleValueNotification.rawValue] + Self.bytes(Handle.events) + value.prefix(mtu - 3)
    }

    // MARK: - Requests

    /// Exchange MTU: answers with ``serverMTU``; the ATT_MTU becomes the smaller of the two, never below 23.
    private mutating func exchangeMTU(_ pdu: [UInt8]) throws(ATTError) -> Action {
        guard pdu.count == 3 else { throw malformed(pdu, "an Exchange MTU Request is 3 bytes") }
        mtu = max(Self.defaultMTU, min(Int(Self.u16(pdu, 1)), Self.serverMTU))
        return .respond([Opcode.exchangeMTUResponse.rawValue] + Self.bytes(UInt16(Self.serverMTU)))
    }

    /// Find Information: the handles and types in a range, all of one UUID size.
    private func findInformation(_ pdu: [UInt8]) throws(ATTError) -> Action {
        guard pdu.count == 5 else { throw malformed(pdu, "a Find Information Request is 5 bytes") }
        let range = try handleRange(pdu)
        var entries: [UInt8] = []
        var format: UInt8 = 0
        for attribute in attributes where range.contains(attribute.handle) {
            let uuid = attribute.type.pdu
            let entryFormat: UInt8 = uuid.count == 2 ? 0x01 : 0x02
            if format == 0 { format = entryFormat }
            guard entryFormat == format, 2 + entries.count + 2 + uuid.count <= mtu else { break }
            entries += Self.bytes(attribute.handle) + uuid
        }
        guard format != 0 else { throw notFound(pdu, range) }
        return .respond([Opcode.findInformationResponse.rawValue, format] + entries)
    }

    /// Find By Type Value: the attributes of a 16-bit type whose value is the one given, with their group's end.
    private func findByTypeValue(_ pdu: [UInt8]) throws(ATTError) -> Action {
        guard pdu.count >= 7 else { throw malformed(pdu, "a Find By Type Value Request is at least 7 bytes") }
        let range = try handleRange(pdu)
        let type = GATTUUID(Self.u16(pdu, 5))
        let wanted = Array(pdu[7...])
        var entries: [UInt8] = []
        for attribute in attributes where range.contains(attribute.handle) && attribute.type == type {
            guard attribute.readable, value(of: attribute) == wanted else { continue }
            guard 1 + entries.count + 4 <= mtu else { break }
            entries += Self.bytes(attribute.handle) + Self.bytes(attribute.groupEnd ?? attribute.handle)
        }
        guard !entries.isEmpty else { throw notFound(pdu, range) }
        return .respond([Opcode.findByTypeValueResponse.rawValue] + entries)
    }

    /// Read By Type: the handles and values of the attributes of a type in a range.
    private func readByType(_ pdu: [UInt8]) throws(ATTError) -> Action {
        guard pdu.count == 7 || pdu.count == 21, let type = GATTUUID(pdu: pdu[5...]) else {
            throw malformed(pdu, "a Read By Type Request is 7 or 21 bytes")
        }
        let range = try handleRange(pdu)
        let list = try sameLengthList(pdu, of: type, in: range) { Self.bytes($0.handle) }
        return .respond([Opcode.readByTypeResponse.rawValue] + list)
    }

    /// Read: an attribute's value, up to ATT_MTU − 1 bytes.
    private func read(_ pdu: [UInt8]) throws(ATTError) -> Action {
        guard pdu.count == 3 else { throw malformed(pdu, "a Read Request is 3 bytes") }
        let value = try readableValue(pdu, Self.u16(pdu, 1))
        return .respond([Opcode.readResponse.rawValue] + value.prefix(mtu - 1))
    }

    /// Read Blob: an attribute's value from an offset, up to ATT_MTU − 1 bytes.
    private func readBlob(_ pdu: [UInt8]) throws(ATTError) -> Action {
        guard pdu.count == 5 else { throw malformed(pdu, "a Read Blob Request is 5 bytes") }
        let handle = Self.u16(pdu, 1)
        let offset = Int(Self.u16(pdu, 3))
        let value = try readableValue(pdu, handle)
        guard offset <= value.count else {
            throw ATTError(.invalidOffset, request: pdu[0], handle: handle, "offset \(offset) of \(value.count)")
        }
        return .respond([Opcode.readBlobResponse.rawValue] + value[offset...].prefix(mtu - 1))
    }

    /// Read By Group Type: the services in a range, with their ends and UUIDs.
    private func readByGroupType(_ pdu: [UInt8]) throws(ATTError) -> Action {
        guard pdu.count == 7 || pdu.count == 21, let type = GATTUUID(pdu: pdu[5...]) else {
            throw malformed(pdu, "a Read By Group Type Request is 7 or 21 bytes")
        }
        let range = try handleRange(pdu)
        guard type == .primaryService || type == .secondaryService else {
            throw ATTError(.unsupportedGroupType, request: pdu[0], handle: range.lowerBound, "\(type) groups nothing")
        }
        let list = try sameLengthList(pdu, of: type, in: range) {
            Self.bytes($0.handle) + Self.bytes($0.groupEnd ?? $0.handle)
        }
        return .respond([Opcode.readByGroupTypeResponse.rawValue] + list)
    }

    /// Write Request and Write Command: the events' configuration, or a command. A request is answered (Write
    /// Response or Error Response), a command never.
    private mutating func write(_ pdu: [UInt8]) throws(ATTError) -> Action {
        let request = pdu[0] == Opcode.writeRequest.rawValue
        guard pdu.count >= 3 else { throw malformed(pdu, "a write is at least 3 bytes") }
        let handle = Self.u16(pdu, 1)
        let value = Array(pdu[3...])
        let response: [UInt8]? = request ? [Opcode.writeResponse.rawValue] : nil
        guard attribute(handle) != nil else {
            throw ATTError(.invalidHandle, request: pdu[0], handle: handle, "no attribute")
        }
        switch handle {
        case Handle.eventsConfiguration:
            guard value.count == 2 else {
                throw ATTError(
                    .invalidAttributeValueLength, request: pdu[0], handle: handle,
                    "a configuration is 2 bytes, not \(value.count)")
            }
            configuration = Self.u16(value, 0)
            return response.map { .respond($0) } ?? .none
        case Handle.command:
            do throws(GATTNotACommand) {
                try takeCommand(value)
                return .command(value, response: response)
            } catch {
                throw ATTError(.notACommand, request: pdu[0], handle: handle, error.reason)
            }
        default:
            throw ATTError(.writeNotPermitted, request: pdu[0], handle: handle, "not writable")
        }
    }

    // MARK: - Helpers

    /// The attribute at `handle`.
    private func attribute(_ handle: UInt16) -> Attribute? {
        guard handle >= 1, Int(handle) <= attributes.count else { return nil }
        return attributes[Int(handle) - 1]
    }

    /// An attribute's value: the database's, or this server's for the events and their configuration.
    private func value(of attribute: Attribute) -> [UInt8] {
        switch attribute.handle {
        case Handle.events: lastEvent
        case Handle.eventsConfiguration: Self.bytes(configuration)
        default: attribute.value
        }
    }

    /// The value at `handle` when there is an attribute there that may be read.
    private func readableValue(_ pdu: [UInt8], _ handle: UInt16) throws(ATTError) -> [UInt8] {
        guard let attribute = attribute(handle) else {
            throw ATTError(.invalidHandle, request: pdu[0], handle: handle, "no attribute")
        }
        guard attribute.readable else {
            throw ATTError(.readNotPermitted, request: pdu[0], handle: handle, "not readable")
        }
        return value(of: attribute)
    }

    /// The list of a Read By Type or Read By Group Type Response: its entries' length, then for each attribute of
    /// `type` in `range`, `head` of the attribute and its value, cut so that an entry fits both the ATT_MTU and the
    /// length byte. As many entries of the first one's length as fit in the ATT_MTU; it stops at an attribute that
    /// may not be read, and refuses the request when that is the first.
    private func sameLengthList(
        _ pdu: [UInt8], of type: GATTUUID, in range: ClosedRange<UInt16>, head: (Attribute) -> [UInt8]
    ) throws(ATTError) -> [UInt8] {
        var entries: [UInt8] = []
        var entryLength = 0
        for attribute in attributes where range.contains(attribute.handle) && attribute.type == type {
            guard attribute.readable else {
                if entryLength == 0 {
                    throw ATTError(.readNotPermitted, request: pdu[0], handle: attribute.handle, "\(type) is not read")
                }
                break
            }
            let head = head(attribute)
            let value = value(of: attribute).prefix(min(mtu - 2 - head.count, Int(UInt8.max) - head.count))
            if entryLength == 0 { entryLength = head.count + value.count }
            guard head.count + value.count == entryLength, 2 + entries.count + entryLength <= mtu else { break }
            entries += head + value
        }
        guard entryLength != 0 else { throw notFound(pdu, range) }
        return [UInt8(entryLength)] + entries
    }

    /// The starting and ending handles of a request (bytes 1...4): the start at least 1 and not above the end.
    private func handleRange(_ pdu: [UInt8]) throws(ATTError) -> ClosedRange<UInt16> {
        let start = Self.u16(pdu, 1)
        let end = Self.u16(pdu, 3)
        guard start != 0, start <= end else {
            throw ATTError(.invalidHandle, request: pdu[0], handle: start, "range \(start)...\(end)")
        }
        return start...end
    }

    /// Refuses a PDU: with an Error Response for a request, silently for a command.
    private func refuse(_ error: ATTError) -> Action {
        .refused(error, response: error.request & Opcode.commandFlag == 0 ? error.pdu : nil)
    }

    /// The refusal of a PDU of the wrong length.
    private func malformed(_ pdu: [UInt8], _ reason: String) -> ATTError {
        ATTError(.invalidPDU, request: pdu[0], "\(reason), not \(pdu.count)")
    }

    /// The refusal of a request that found nothing in its range.
    private func notFound(_ pdu: [UInt8], _ range: ClosedRange<UInt16>) -> ATTError {
        ATTError(.attributeNotFound, request: pdu[0], handle: range.lowerBound, "nothing in the range")
    }

    /// The `u16le` at `offset`.
    private static func u16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// A `u16le`.
    private static func bytes(_ value: UInt16) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(value >> 8)]
    }

    /// A value cut to ``maxValueLength`` bytes.
    private static func cut(_ value: [UInt8]) -> [UInt8] { Array(value.prefix(maxValueLength)) }

    /// A text as UTF-8, cut to ``maxValueLength`` bytes at a character's start.
    private static func cut(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for character in text {
            guard bytes.count + character.utf8.count <= maxValueLength else { break }
            bytes += character.utf8
        }
        return bytes
    }
}
