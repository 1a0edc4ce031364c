import LanSession
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import Testing
import WireCodec

@testable import LanSessionLE

/// The attribute server as a central sees it. Expected PDUs are written from the Bluetooth Core specification (Vol 3,
/// Parts F and G) and docs/wire-format.md 4.2, byte by byte.
@Suite("ATTServer")
struct ATTServerTests {
    /// LanSession's service UUID as PDUs carry it: 4C414E53-4553-5349-4F4E-0000000000A0, little-endian.
    static func lanSession(_ last: UInt8) -> [UInt8] {
        [last, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4E, 0x4F, 0x49, 0x53, 0x53, 0x45, 0x53, 0x4E, 0x41, 0x4C]
    }

    /// The Error Response to `request` at `handle` with `code`.
    static func error(_ request: UInt8, _ handle: UInt16, _ code: UInt8) -> ATTServer.Action {
        let pdu: [UInt8] = [0x01, request, UInt8(handle & 0xFF), UInt8(handle >> 8), code]
        return .respond(pdu)
    }

    /// What the server answers, error responses as `.respond` with the PDU (the reason is for logs only).
    static func answer(_ server: inout ATTServer, _ pdu: [UInt8]) -> ATTServer.Action {
        switch server.receive(pdu) {
        case .refused(_, let response?): .respond(response)
        case let other: other
        }
    }

    /// The code of a refusal without response (a command's), nil for anything else.
    static func silentRefusal(_ action: ATTServer.Action) -> UInt8? {
        guard case .refused(let error, nil) = action else { return nil }
        return error.code.rawValue
    }

    @Test("the UUIDs are the ones the specification gives, and go little-endian in PDUs")
    func uuids() {
        #expect(GATTFace.serviceUUID == "4C414E53-4553-5349-4F4E-0000000000A0")
        #expect(GATTFace.identityUUID == "4C414E53-4553-5349-4F4E-0000000000A1")
        #expect(GATTFace.commandUUID == "4C414E53-4553-5349-4F4E-0000000000A2")
        #expect(GATTFace.eventsUUID == "4C414E53-4553-5349-4F4E-0000000000A3")
        #expect(GATTUUID("4c414e53-4553-5349-4f4e-0000000000a0") == ATTServer.serviceUUID)
        #expect(ATTServer.serviceUUID.pdu == Self.lanSession(0xA0))
        #expect(GATTUUID(0x2803).pdu == [0x03, 0x28])
        #expect(GATTUUID("00002803-0000-1000-8000-00805F9B34FB") == .characteristic)
        #expect(GATTUUID("4C414E53") == nil)
    }

    @Test("service discovery: Read By Group Type of «Primary Service» over 0x0001...0xFFFF, at ATT_MTU 23")
    func primaryServices() {
        var server = ATTServer(identity: "x")
        // Generic Access, 0x0001...0x0005; the next service's UUID is of another length: a response of its own.
        #expect(
            Self.answer(&server, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
                == .respond([0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18]))
        #expect(
            Self.answer(&server, [0x10, 0x06, 0x00, 0xFF, 0xFF, 0x00, 0x28])
                == .respond([0x11, 0x14, 0x06, 0x00, 0x0D, 0x00] + Self.lanSession(0xA0)))
        #expect(Self.answer(&server, [0x10, 0x0E, 0x00, 0xFF, 0xFF, 0x00, 0x28]) == Self.error(0x10, 0x000E, 0x0A))
        // Secondary services: none.
        #expect(Self.answer(&server, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x01, 0x28]) == Self.error(0x10, 0x0001, 0x0A))
    }

    @Test("service discovery by UUID: Find By Type Value of «Primary Service» = LanSession's service")
    func serviceByUUID() {
        var server = ATTServer(identity: "x")
        #expect(
            Self.answer(&server, [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28] + Self.lanSession(0xA0))
                == .respond([0x07, 0x06, 0x00, 0x0D, 0x00]))
        #expect(
            Self.answer(&server, [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x00, 0x18])
                == .respond([0x07, 0x01, 0x00, 0x05, 0x00]))
        #expect(
            Self.answer(&server, [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0F, 0x18]) == Self.error(0x06, 1, 0x0A))
    }

    @Test("characteristic discovery: Read By Type of «Characteristic» in each service, from the last handle found on")
    func characteristics() {
        var server = ATTServer(identity: "x")
        #expect(
            Self.answer(&server, [0x08, 0x01, 0x00, 0x05, 0x00, 0x03, 0x28])
                == .respond([
                    0x09, 0x07, 0x02, 0x00, 0x02, 0x03, 0x00, 0x00, 0x2A, 0x04, 0x00, 0x02, 0x05, 0x00, 0x01, 0x2A,
                ]))
        // 21-byte entries: one per response at ATT_MTU 23.
        #expect(
            Self.answer(&server, [0x08, 0x06, 0x00, 0x0D, 0x00, 0x03, 0x28])
                == .respond([0x09, 0x15, 0x07, 0x00, 0x02, 0x08, 0x00] + Self.lanSession(0xA1)))
        #expect(
            Self.answer(&server, [0x08, 0x08, 0x00, 0x0D, 0x00, 0x03, 0x28])
                == .respond([0x09, 0x15, 0x09, 0x00, 0x0C, 0x0A, 0x00] + Self.lanSession(0xA2)))
        #expect(
            Self.answer(&server, [0x08, 0x0A, 0x00, 0x0D, 0x00, 0x03, 0x28])
                == .respond([0x09, 0x15, 0x0B, 0x00, 0x12, 0x0C, 0x00] + Self.lanSession(0xA3)))
        #expect(Self.answer(&server, [0x08, 0x0C, 0x00, 0x0D, 0x00, 0x03, 0x28]) == Self.error(0x08, 0x000C, 0x0A))
        // The type in its 128-bit form is the same type.
        let long = GATTUUID.characteristic.bytes.reversed()
        #expect(
            Self.answer(&server, [0x08, 0x06, 0x00, 0x0D, 0x00] + long)
                == .respond([0x09, 0x15, 0x07, 0x00, 0x02, 0x08, 0x00] + Self.lanSession(0xA1)))
    }

    @Test("after an MTU exchange the three characteristics come in one response")
    func characteristicsAtLargeMTU() {
        var server = ATTServer(identity: "x")
        #expect(Self.answer(&server, [0x02, 0x05, 0x02]) == .respond([0x03, 0x05, 0x02]))
        let expected: [UInt8] =
            [0x09, 0x15]
            + [0x07, 0x00, 0x02, 0x08, 0x00] + Self.lanSession(0xA1)
            + [0x09, 0x00, 0x0C, 0x0A, 0x00] + Self.lanSession(0xA2)
            + [0x0B, 0x00, 0x12, 0x0C, 0x00] + Self.lanSession(0xA3)
        #expect(Self.answer(&server, [0x08, 0x06, 0x00, 0x0D, 0x00, 0x03, 0x28]) == .respond(expected))
    }

    @Test("descriptor discovery: Find Information after the events' value finds the configuration")
    func descriptors() {
        var server = ATTServer(identity: "x")
        #expect(
            Self.answer(&server, [0x04, 0x0D, 0x00, 0x0D, 0x00]) == .respond([0x05, 0x01, 0x0D, 0x00, 0x02, 0x29]))
        // One UUID size per response: the events' 128-bit value alone, then the 16-bit descriptor.
        #expect(
            Self.answer(&server, [0x04, 0x0C, 0x00, 0xFF, 0xFF])
                == .respond([0x05, 0x02, 0x0C, 0x00] + Self.lanSession(0xA3)))
        #expect(
            Self.answer(&server, [0x04, 0x01, 0x00, 0x03, 0x00])
                == .respond([0x05, 0x01, 0x01, 0x00, 0x00, 0x28, 0x02, 0x00, 0x03, 0x28, 0x03, 0x00, 0x00, 0x2A]))
        #expect(Self.answer(&server, [0x04, 0x0E, 0x00, 0xFF, 0xFF]) == Self.error(0x04, 0x000E, 0x0A))
        #expect(Self.answer(&server, [0x04, 0x00, 0x00, 0xFF, 0xFF]) == Self.error(0x04, 0x0000, 0x01))
        #expect(Self.answer(&server, [0x04, 0x05, 0x00, 0x04, 0x00]) == Self.error(0x04, 0x0005, 0x01))
    }

    @Test("the identity reads as UTF-8; a long one whole with Read Blob")
    func identity() {
        var server = ATTServer(identity: "peer 0123456789abcdef \"alice\" session \"lab\"", deviceName: "hci0")
        let text = Array("peer 0123456789abcdef \"alice\" session \"lab\"".utf8)
        #expect(text.count == 43)
        #expect(Self.answer(&server, [0x0A, 0x08, 0x00]) == .respond([0x0B] + text[0..<22]))
        #expect(Self.answer(&server, [0x0C, 0x08, 0x00, 0x16, 0x00]) == .respond([0x0D] + text[22..<43]))
        #expect(Self.answer(&server, [0x0C, 0x08, 0x00, 0x2B, 0x00]) == .respond([0x0D]))
        #expect(Self.answer(&server, [0x0C, 0x08, 0x00, 0x2C, 0x00]) == Self.error(0x0C, 0x0008, 0x07))
        #expect(Self.answer(&server, [0x0A, 0x03, 0x00]) == .respond([0x0B, 0x68, 0x63, 0x69, 0x30]))
        // Read By Type of the identity's UUID, as a central that knows it reads it.
        #expect(
            Self.answer(&server, [0x08, 0x01, 0x00, 0xFF, 0xFF] + Self.lanSession(0xA1))
                == .respond([0x09, 0x15, 0x08, 0x00] + text[0..<19]))
    }

    @Test("reads the database does not allow, and handles it does not have")
    func refusedReads() {
        var server = ATTServer(identity: "x")
        #expect(Self.answer(&server, [0x0A, 0x0A, 0x00]) == Self.error(0x0A, 0x000A, 0x02))
        #expect(Self.answer(&server, [0x0A, 0x0E, 0x00]) == Self.error(0x0A, 0x000E, 0x01))
        #expect(Self.answer(&server, [0x0A, 0x00, 0x00]) == Self.error(0x0A, 0x0000, 0x01))
        #expect(Self.answer(&server, [0x0C, 0x0A, 0x00, 0x00, 0x00]) == Self.error(0x0C, 0x000A, 0x02))
        // The command characteristic's value is the first match: refused, not skipped.
        #expect(
            Self.answer(&server, [0x08, 0x01, 0x00, 0xFF, 0xFF] + Self.lanSession(0xA2))
                == Self.error(0x08, 0x000A, 0x02))
        #expect(Self.answer(&server, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28]) == Self.error(0x10, 0x0001, 0x10))
        #expect(Self.answer(&server, [0x10, 0x05, 0x00, 0x01, 0x00, 0x00, 0x28]) == Self.error(0x10, 0x0005, 0x01))
    }

    @Test("MTU exchange: the smaller of the two, never below 23, and notifications follow it")
    func mtu() {
        var server = ATTServer(identity: "x")
        #expect(server.mtu == 23)
        #expect(Self.answer(&server, [0x02, 0x00, 0x01]) == .respond([0x03, 0x05, 0x02]))
        #expect(server.mtu == 256)
        #expect(Self.answer(&server, [0x02, 0x00, 0x10]) == .respond([0x03, 0x05, 0x02]))
        #expect(server.mtu == 517)
        #expect(Self.answer(&server, [0x02, 0x10, 0x00]) == .respond([0x03, 0x05, 0x02]))
        #expect(server.mtu == 23)
    }

    @Test("the events' configuration enables notifications, which carry the events' value handle")
    func notifications() {
        var server = ATTServer(identity: "x")
        let increment: [UInt8] = [0x02, 0x27, 0x01]
        #expect(server.notify(increment) == nil)
        #expect(Self.answer(&server, [0x0A, 0x0D, 0x00]) == .respond([0x0B, 0x00, 0x00]))
        #expect(Self.answer(&server, [0x12, 0x0D, 0x00, 0x01, 0x00]) == .respond([0x13]))
        #expect(Self.answer(&server, [0x0A, 0x0D, 0x00]) == .respond([0x0B, 0x01, 0x00]))
        #expect(server.notify(increment) == [0x1B, 0x0C, 0x00, 0x02, 0x27, 0x01])
        // The value is the last event's.
        #expect(Self.answer(&server, [0x0A, 0x0C, 0x00]) == .respond([0x0B, 0x02, 0x27, 0x01]))
        // Cut to ATT_MTU − 3; the whole value reads with Read Blob.
        let long = [UInt8](0..<30)
        #expect(server.notify(long) == [0x1B, 0x0C, 0x00] + long[0..<20])
        #expect(Self.answer(&server, [0x0C, 0x0C, 0x00, 0x16, 0x00]) == .respond([0x0D] + long[22..<30]))
        // Disabled again.
        #expect(Self.answer(&server, [0x12, 0x0D, 0x00, 0x00, 0x00]) == .respond([0x13]))
        #expect(server.notify(increment) == nil)
        // A configuration is two bytes.
        #expect(Self.answer(&server, [0x12, 0x0D, 0x00, 0x01]) == Self.error(0x12, 0x000D, 0x0D))
        // A Write Command sets it too.
        #expect(server.receive([0x52, 0x0D, 0x00, 0x01, 0x00]) == .none)
        #expect(server.notifying)
    }

    @Test("a write of the command characteristic goes to the application, which takes it or refuses it (0x80)")
    func commands() {
        let taken = Commands()
        var server = ATTServer(identity: "x", taken: taken)
        #expect(server.receive([0x52, 0x0A, 0x00, 0x02, 0x24, 0x02]) == .command([0x02, 0x24, 0x02], response: nil))
        #expect(
            server.receive([0x12, 0x0A, 0x00, 0x02, 0x27, 0x03]) == .command([0x02, 0x27, 0x03], response: [0x13]))
        #expect(taken.values == [[0x02, 0x24, 0x02], [0x02, 0x27, 0x03]])
        // Refused by the application: a Write Command is dropped, a Write Request answered with 0x80.
        #expect(Self.silentRefusal(server.receive([0x52, 0x0A, 0x00, 0xFF])) == 0x80)
        #expect(Self.silentRefusal(server.receive([0x52, 0x0A, 0x00])) == 0x80)
        #expect(Self.answer(&server, [0x12, 0x0A, 0x00, 0xFF]) == Self.error(0x12, 0x000A, 0x80))
        #expect(taken.values.count == 2)
        // Writes elsewhere.
        #expect(Self.answer(&server, [0x12, 0x08, 0x00, 0x41]) == Self.error(0x12, 0x0008, 0x03))
        #expect(Self.answer(&server, [0x12, 0x20, 0x00, 0x41]) == Self.error(0x12, 0x0020, 0x01))
        #expect(Self.silentRefusal(server.receive([0x52, 0x08, 0x00, 0x41])) == 0x03)
    }

    @Test("malformed PDUs get Invalid PDU, unknown requests Request Not Supported, unknown commands nothing")
    func malformed() {
        var server = ATTServer(identity: "x")
        #expect(Self.answer(&server, []) == Self.error(0x00, 0, 0x04))
        #expect(Self.answer(&server, [0x02, 0x17]) == Self.error(0x02, 0, 0x04))
        #expect(Self.answer(&server, [0x04, 0x01, 0x00, 0xFF]) == Self.error(0x04, 0, 0x04))
        #expect(Self.answer(&server, [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00]) == Self.error(0x06, 0, 0x04))
        #expect(Self.answer(&server, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03]) == Self.error(0x08, 0, 0x04))
        #expect(Self.answer(&server, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28, 0x00]) == Self.error(0x08, 0, 0x04))
        #expect(Self.answer(&server, [0x0A, 0x08]) == Self.error(0x0A, 0, 0x04))
        #expect(Self.answer(&server, [0x0C, 0x08, 0x00, 0x00]) == Self.error(0x0C, 0, 0x04))
        #expect(Self.answer(&server, [0x10, 0x01, 0x00]) == Self.error(0x10, 0, 0x04))
        #expect(Self.answer(&server, [0x12, 0x0D]) == Self.error(0x12, 0, 0x04))
        #expect(Self.silentRefusal(server.receive([0x52, 0x0D])) == 0x04)
        // Prepare Write, Read Multiple, an opcode nobody defined.
        #expect(Self.answer(&server, [0x16, 0x0A, 0x00, 0x00, 0x00, 0x01]) == Self.error(0x16, 0, 0x06))
        #expect(Self.answer(&server, [0x0E, 0x08, 0x00, 0x03, 0x00]) == Self.error(0x0E, 0, 0x06))
        #expect(Self.answer(&server, [0x3F]) == Self.error(0x3F, 0, 0x06))
        // Signed Write Command, an unknown command, a confirmation of no indication.
        #expect(server.receive([0xD2, 0x0A, 0x00, 0x02, 0x27, 0x01] + [UInt8](repeating: 0, count: 12)) == .none)
        #expect(server.receive([0x7F, 0x01]) == .none)
        #expect(server.receive([0x1E]) == .none)
    }

    @Test("the golden vectors of docs/wire-format.md 4.2, as one central's conversation")
    func goldenVectors() throws {
        func hex(_ text: String) -> [UInt8] { text.split(separator: " ").map { UInt8($0, radix: 16)! } }
        var server = ATTServer(identity: "x")
        #expect(Self.answer(&server, hex("10 01 00 ff ff 00 28")) == .respond(hex("11 06 01 00 05 00 00 18")))
        #expect(
            Self.answer(&server, hex("10 06 00 ff ff 00 28"))
                == .respond(hex("11 14 06 00 0d 00 a0 00 00 00 00 00 4e 4f 49 53 53 45 53 4e 41 4c")))
        #expect(Self.answer(&server, hex("10 0e 00 ff ff 00 28")) == .respond(hex("01 10 0e 00 0a")))
        #expect(
            Self.answer(&server, hex("08 06 00 0d 00 03 28"))
                == .respond(hex("09 15 07 00 02 08 00 a1 00 00 00 00 00 4e 4f 49 53 53 45 53 4e 41 4c")))
        #expect(Self.answer(&server, hex("12 0d 00 01 00")) == .respond(hex("13")))
        // The original apps' commands and events are only values here (BubblesAndCounterTests reads them as such).
        let move = hex("0c 25 01 00 00 c9 42 00 00 a2 c1 02 01")
        #expect(server.receive(hex("52 0a 00") + move) == .command(move, response: nil))
        #expect(server.receive(hex("12 0a 00 02 27 03")) == .command(hex("02 27 03"), response: hex("13")))
        #expect(Self.answer(&server, hex("12 0a 00 ff")) == .respond(hex("01 12 0a 00 80")))
        #expect(server.notify(move) == hex("1b 0c 00 0c 25 01 00 00 c9 42 00 00 a2 c1 02 01"))
        let count = hex("0b 28 01 ef cd ab 89 67 45 23 01 2a")
        #expect(server.notify(count) == hex("1b 0c 00 0b 28 01 ef cd ab 89 67 45 23 01 2a"))
        #expect(Self.answer(&server, hex("02 00 02")) == .respond(hex("03 05 02")))
        #expect(server.mtu == 512)
        // A value of 20 bytes fits a notification at the default ATT_MTU whole.
        var fresh = ATTServer(identity: "x")
        _ = fresh.receive(hex("12 0d 00 01 00"))
        let largest = [UInt8](repeating: 0x7F, count: 20)
        #expect(fresh.notify(largest) == hex("1b 0c 00") + largest)
    }

    @Test("the identity text quotes names")
    func identityText() {
        let text = GATTFace.identityText(
            peer: PeerID(0x0123_4567_89ab_cdef), name: "a \"b\\", session: "lab", fingerprint: nil)
        #expect(text == #"peer 0123456789abcdef "a \"b\\" session "lab" fingerprint -"#)
        // Cut to 512 bytes at a character's start.
        let server = ATTServer(identity: String(repeating: "é", count: 300))
        #expect(server.attributes[Int(ATTServer.Handle.identity) - 1].value.count == 512)
    }

    @Test("the bearer handler answers each PDU with one write and notifies subscribed centrals")
    func bearer() throws {
        let commands = Commands()
        let handler = ATTBearerHandler(server: ATTServer(identity: "x", taken: commands), logger: Logger(label: "test"))
        let channel = EmbeddedChannel(handlers: [SDUWriter(mtu: ATTServer.serverMTU), handler])
        func written() throws -> [[UInt8]] {
            var pdus: [[UInt8]] = []
            while let pdu = try channel.readOutbound(as: ByteBuffer.self) { pdus.append(Array(buffer: pdu)) }
            return pdus
        }
        channel.pipeline.triggerUserOutboundEvent(ATTBearerHandler.Notification(payload: [0x02, 0x27, 0x01]))
            .whenFailure { Issue.record($0) }
        #expect(try written() == [])
        try channel.writeInbound(ByteBuffer(bytes: [0x12, 0x0D, 0x00, 0x01, 0x00]))
        try channel.writeInbound(ByteBuffer(bytes: [0x52, 0x0A, 0x00, 0x02, 0x24, 0x01]))
        channel.pipeline.triggerUserOutboundEvent(ATTBearerHandler.Notification(payload: [0x02, 0x27, 0x01]))
            .whenFailure { Issue.record($0) }
        #expect(try written() == [[0x13], [0x1B, 0x0C, 0x00, 0x02, 0x27, 0x01]])
        #expect(commands.values == [[0x02, 0x24, 0x01]])
        _ = try channel.finish()
    }
}

/// Values the application behind a server took, in order.
final class Commands: Sendable {
    private let storage = Mutex<[[UInt8]]>([])
    var values: [[UInt8]] { storage.withLock { $0 } }
    func append(_ value: [UInt8]) { storage.withLock { $0.append(value) } }
}

extension ATTServer {
    /// A server whose application takes every value written to the command characteristic but an empty one or one
    /// that starts with 0xFF, recording those it takes in `taken`.
    init(identity: String, deviceName: String = ATTServer.defaultDeviceName, taken: Commands = Commands()) {
        self.init(identity: identity, deviceName: deviceName) { value throws(GATTNotACommand) in
            guard let first = value.first, first != 0xFF else { throw GATTNotACommand("no command") }
            taken.append(value)
        }
    }
}
