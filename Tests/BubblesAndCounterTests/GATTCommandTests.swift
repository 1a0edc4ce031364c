import BubblesAndCounter
import BubblesAndCounterGATT
import Synchronization
import Testing
import WireCodec

@testable import LanSessionLE

/// The original apps on the LE GATT face (docs/wire-format.md 4.2): the commands a central writes, the events it is
/// notified, and the section's golden vectors through the face's attribute server.
@Suite("GATT commands and events")
struct GATTCommandTests {
    static func hex(_ text: String) -> [UInt8] { text.split(separator: " ").map { UInt8($0, radix: 16)! } }

    /// A server whose command characteristic's writes go to the apps' commands, recorded in `taken`.
    static func server(_ taken: Taken) -> ATTServer {
        ATTServer(identity: "x", commands: GATTCommand.taker { command in taken.append(command) })
    }

    /// The code of a refusal without response (a command's), nil for anything else.
    static func silentRefusal(_ action: ATTServer.Action) -> UInt8? {
        guard case .refused(let error, nil) = action else { return nil }
        return error.code.rawValue
    }

    @Test("a framed pickUp, move, drop or increment is a command; the move's sequence is not kept")
    func commands() throws {
        let move = Self.hex("0c 25 01 00 00 c9 42 00 00 a2 c1 02 01")
        #expect(try GATTCommand(frame: move) == .move(view: 1, x: 100.5, y: -20.25))
        #expect(try GATTCommand(frame: Self.hex("02 27 03")) == .increment(count: 3))
        #expect(try GATTCommand(frame: Self.hex("02 24 02")) == .pickUp(view: 2))
        #expect(try GATTCommand(frame: Self.hex("0a 26 01 00 00 20 43 00 00 70 43")) == .drop(view: 1, x: 160, y: 240))
        // 1000 increments at most: 1000 is e8 07, 1001 e9 07.
        #expect(try GATTCommand(frame: Self.hex("03 27 e8 07")) == .increment(count: 1000))
        #expect(throws: GATTCommand.DecodingError.self) { try GATTCommand(frame: Self.hex("03 27 e9 07")) }
    }

    @Test("a value that is not one command is refused: dropped as a Write Command, 0x80 to a Write Request")
    func refused() {
        let taken = Taken()
        var server = Self.server(taken)
        for value in [
            "ff", "", "04 30 02 68 69",  // not a frame; nothing; a `data`, the session's, no command
            "02 27 01 02 27 01", "02 27", "02 27 00",  // two frames, a frame cut short, a count of 0
            "02 20 00", "0c 25 01 00 00 c0 7f 00 00 a2 c1 02 01",  // a handshake; a move to x = NaN
        ] {
            #expect(Self.silentRefusal(server.receive(Self.hex("52 0a 00 " + value))) == 0x80, "\(value)")
        }
        #expect(taken.values == [])
    }

    @Test("events encode as one framed message each")
    func events() throws {
        let alice = PeerID(0x0123_4567_89ab_cdef)
        #expect(
            try GATTEvent.move(view: 1, x: 100.5, y: -20.25, sequence: 258).payload()
                == Self.hex("0c 25 01 00 00 c9 42 00 00 a2 c1 02 01"))
        #expect(
            try GATTEvent.count(peer: alice, count: 42).payload() == Self.hex("0b 28 01 ef cd ab 89 67 45 23 01 2a"))
        #expect(
            try GATTEvent.bubble(view: 2, holder: alice, x: 10, y: 20).payload()
                == Self.hex("12 29 02 ef cd ab 89 67 45 23 01 00 00 20 41 00 00 a0 41"))
        // The largest total that fits a notification at the default ATT_MTU whole: 2^63 − 1.
        #expect(try GATTEvent.count(peer: PeerID(1), count: UInt64(Int64.max)).payload().count == 20)
        #expect(throws: WireError.self) { try GATTEvent.move(view: 0, x: .nan, y: 0, sequence: 1).payload() }
    }

    @Test("the face notifies moves with its own numbering, holders at their position, drops and totals; nothing else")
    func notifications() async {
        let alice = PeerID(7)
        var numbering = GATTNotifications()
        let position: (UInt8) async -> (x: Float, y: Float)? = { view in view == 2 ? (10, 20) : nil }
        let events: [BubblesAndCounterEvent] = [
            .move(view: 1, x: 3, y: 4, by: alice), .move(view: 1, x: 5, y: 6, by: PeerID(8)),
            .holder(view: 2, holder: alice), .holder(view: 1, holder: nil), .drop(view: 2, x: 1, y: 2, by: alice),
            .counter(alice, count: 41, total: 50), .pickUp(view: 0, by: alice), .layout([alice: 0]),
            .countClaimedAbove(by: alice, claimed: 9, local: 3), .eventsMissed(2),
        ]
        var notified: [GATTEvent?] = []
        for event in events { notified.append(await numbering.notification(for: event, position: position)) }
        #expect(
            notified == [
                .move(view: 1, x: 3, y: 4, sequence: 1), .move(view: 1, x: 5, y: 6, sequence: 2),
                .bubble(view: 2, holder: alice, x: 10, y: 20), nil, .bubble(view: 2, holder: nil, x: 1, y: 2),
                .count(peer: alice, count: 41), nil, nil, nil, nil,
            ])
        #expect(numbering.moveSequence == 2)
    }

    @Test("the golden vectors of docs/wire-format.md 4.2 that carry the apps' commands and events")
    func goldenVectors() throws {
        let taken = Taken()
        var server = Self.server(taken)
        #expect(server.receive(Self.hex("12 0d 00 01 00")) == .respond(Self.hex("13")))
        let move = Self.hex("0c 25 01 00 00 c9 42 00 00 a2 c1 02 01")
        #expect(server.receive(Self.hex("52 0a 00") + move) == .command(move, response: nil))
        #expect(
            server.receive(Self.hex("12 0a 00 02 27 03")) == .command(Self.hex("02 27 03"), response: Self.hex("13")))
        guard case .refused(_, let response?) = server.receive(Self.hex("12 0a 00 ff")) else {
            Issue.record("a write that is no command was not refused")
            return
        }
        #expect(response == Self.hex("01 12 0a 00 80"))
        #expect(taken.values == [.move(view: 1, x: 100.5, y: -20.25), .increment(count: 3)])
        let moved = try GATTEvent.move(view: 1, x: 100.5, y: -20.25, sequence: 258).payload()
        #expect(server.notify(moved) == Self.hex("1b 0c 00 0c 25 01 00 00 c9 42 00 00 a2 c1 02 01"))
        let count = try GATTEvent.count(peer: PeerID(0x0123_4567_89ab_cdef), count: 42).payload()
        #expect(server.notify(count) == Self.hex("1b 0c 00 0b 28 01 ef cd ab 89 67 45 23 01 2a"))
    }
}

/// Commands the apps' taker passed on, in order.
final class Taken: Sendable {
    private let storage = Mutex<[GATTCommand]>([])
    var values: [GATTCommand] { storage.withLock { $0 } }
    func append(_ command: GATTCommand) { storage.withLock { $0.append(command) } }
}
