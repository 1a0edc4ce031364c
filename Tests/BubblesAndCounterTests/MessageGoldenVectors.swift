import BubblesAndCounter
import Foundation
import TestSupport
import WireCodec

/// The original apps' golden vectors of docs/wire-format.md 8, and the spec's rows of them.
enum MessageGoldenVectors {
    static let alice = PeerID(0x0123_4567_89AB_CDEF)
    static let bob = PeerID(0xFEDC_BA98_7654_3210)

    /// Name as in the spec's table, the message, and its stream frame in hex.
    static let frames: [(name: String, message: BubblesAndCounterMessage, hex: String)] = [
        ("handshake", .handshake(peerName: "alice"), "07 20 05 61 6c 69 63 65"),
        ("negotiate", .negotiate(playerIndex: 1, timestamp: 1_700_000_000_000), "08 21 01 80 d0 95 ff bc 31"),
        ("negotiateConfirm", .negotiateConfirm(playerIndex: 1), "02 22 01"),
        (
            "layout",
            .layout([LayoutEntry(peerID: alice, playerIndex: 0), LayoutEntry(peerID: bob, playerIndex: 1)]),
            "14 23 02 ef cd ab 89 67 45 23 01 00 10 32 54 76 98 ba dc fe 01"
        ),
        ("pickUp", .pickUp(view: 2), "02 24 02"),
        ("move", .move(Move(view: 1, x: 100.5, y: -20.25, sequence: 258)), "0c 25 01 00 00 c9 42 00 00 a2 c1 02 01"),
        ("drop", .drop(Drop(view: 1, x: 160, y: 240)), "0a 26 01 00 00 20 43 00 00 70 43"),
        ("counterIncrement", .counterIncrement(count: 1), "02 27 01"),
        ("counterIncrement+300", .counterIncrement(count: 300), "03 27 ac 02"),
        ("counterIncrement+max", .counterIncrement(count: .max), "0b 27 ff ff ff ff ff ff ff ff ff 01"),
        (
            "counterState",
            .counterState([CounterEntry(peerID: alice, count: 42), CounterEntry(peerID: bob, count: 1000)]),
            "15 28 02 ef cd ab 89 67 45 23 01 2a 10 32 54 76 98 ba dc fe e8 07"
        ),
        (
            "bubbleState", .bubbleState(BubbleState(view: 2, holder: alice, x: 10, y: 20)),
            "12 29 02 ef cd ab 89 67 45 23 01 00 00 20 41 00 00 a0 41"
        ),
        (
            "bubbleState+free", .bubbleState(BubbleState(view: 0, holder: nil, x: 0.5, y: 0.25)),
            "12 29 00 00 00 00 00 00 00 00 00 00 00 00 3f 00 00 80 3e"
        ),
    ]

    /// The spec's datagram: two moves of bubble 0 after a header with token 0x1122334455667788 and sequence 5.
    static let datagramMoves = [Move(view: 0, x: 1, y: 2, sequence: 9), Move(view: 0, x: 1.5, y: 2.5, sequence: 10)]
    static let datagramHex =
        "88 77 66 55 44 33 22 11 05 0c 25 00 00 00 80 3f 00 00 00 40 09 00 0c 25 00 00 00 c0 3f 00 00 20 40 0a 00"

    static let specURL = SpecDocument.url

    /// The spec's golden rows of the form "| `name` | ... | `hex` |" whose frame is of an application kind.
    static func specRows() throws -> [String: String] {
        try SpecDocument.goldenRows().filter { $0.key != "datagram" && SpecDocument.isApplicationFrame($0.value) }
    }

    /// Bytes from the spec's hex notation ("0c 25 01").
    static func bytes(hex: String) -> [UInt8] {
        hex.split(separator: " ").map { UInt8($0, radix: 16)! }
    }

    /// The spec's hex notation of bytes.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    }
}
