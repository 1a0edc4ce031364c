import Foundation
import SessionControl
import Testing
import WireCodec

@testable import sessiond

/// Events to and from their lines: each of docs/control-protocol.md's events read as its case and written back as the
/// same object; the daemon's events stamped with `time`.
@Suite("ControlEvent")
struct ControlEventTests {
    static let peer = "000000000000002a"
    static let transfer = TransferResult(
        id: "in:000000000000002a/1", peerID: peer, name: "f.bin", direction: "receiving", phase: "started", bytes: 0,
        total: 10)

    static let golden: [(String, ControlEvent)] = [
        (#"{"event":"peerConnected","peerID":"p","name":"n"}"#, .peerConnected(peerID: "p", name: "n")),
        (#"{"event":"peerLost","peerID":"p"}"#, .peerLost(peerID: "p")),
        (
            #"{"event":"linkChanged","peerID":"p","transport":"lan","address":"a:1","state":"active"}"#,
            .linkChanged(peerID: "p", transport: "lan", address: "a:1", state: "active")
        ),
        (#"{"event":"peerLeft","peerID":"p","reason":"shutdown"}"#, .peerLeft(peerID: "p", reason: "shutdown")),
        (
            #"{"event":"peerState","peerID":"p","name":"n","state":"connected","address":"a:1"}"#,
            .peerState(peerID: "p", name: "n", state: "connected", address: "a:1")
        ),
        (#"{"event":"counter","peerID":"p","count":3,"total":5}"#, .counter(peerID: "p", count: 3, total: 5)),
        (#"{"event":"pickUp","view":1,"peerID":"p"}"#, .pickUp(view: 1, peerID: "p")),
        (#"{"event":"holder","view":1,"holder":"p"}"#, .holder(view: 1, holder: "p")),
        (#"{"event":"holder","view":2}"#, .holder(view: 2, holder: nil)),
        (#"{"event":"move","view":1,"x":1.5,"y":2,"peerID":"p"}"#, .move(view: 1, x: 1.5, y: 2, peerID: "p")),
        (#"{"event":"drop","view":1,"x":1.5,"y":2,"peerID":"p"}"#, .drop(view: 1, x: 1.5, y: 2, peerID: "p")),
        (#"{"event":"layout","layout":{"p":0,"q":1}}"#, .layout(["p": 0, "q": 1])),
        (#"{"event":"invitation","id":4,"peerID":"p","name":"n"}"#, .invitation(id: 4, peerID: "p", name: "n")),
        (
            #"{"event":"declined","address":"a:1","reason":"notTrusted"}"#,
            .declined(peerID: nil, address: "a:1", reason: "notTrusted")
        ),
        (#"{"event":"unacknowledged","peerID":"p","count":2}"#, .unacknowledged(peerID: "p", count: 2)),
        (#"{"event":"resynchronised","peerID":"p","count":2}"#, .resynchronised(peerID: "p", count: 2)),
        (#"{"event":"peerChanged","peerID":"p","state":"connecting"}"#, .peerChanged(peerID: "p", state: "connecting")),
        (#"{"event":"connectFailed","address":"a:1","reason":"r"}"#, .connectFailed(address: "a:1", reason: "r")),
        (
            #"{"event":"data","peerID":"p","data":"aGk=","text":"hi","count":2,"channel":"unreliable"}"#,
            .data(peerID: "p", data: Data("hi".utf8), channel: .unreliable)
        ),
        (
            #"{"event":"data","peerID":"p","data":"/w==","count":1,"channel":"reliable"}"#,
            .data(peerID: "p", data: Data([0xFF]), channel: .reliable)
        ),
        (#"{"event":"streamOpened","peerID":"p","name":"s","id":3}"#, .streamOpened(peerID: "p", name: "s", id: 3)),
        (
            #"{"event":"transfer","peerID":"000000000000002a","name":"f.bin","transfer":{"id":"in:000000000000002a/1","peerID":"000000000000002a","name":"f.bin","direction":"receiving","phase":"started","bytes":0,"total":10,"resumedFrom":0}}"#,
            .transfer(transfer)
        ),
        (#"{"event":"notice","reason":"r"}"#, .notice("r")),
        (
            #"{"event":"countClaimedAbove","peerID":"p","count":9,"total":1}"#,
            .countClaimedAbove(peerID: "p", count: 9, total: 1)
        ),
        (#"{"event":"eventsMissed","count":7}"#, .eventsMissed(count: 7)),
        (#"{"event":"eventsMissed","count":0,"restarted":true}"#, .eventsMissed(count: 0, restarted: true)),
        (
            #"{"event":"pairingRequested","peerID":"p","name":"n","fingerprint":"f","code":"123456"}"#,
            .pairingRequested(peerID: "p", name: "n", fingerprint: "f", code: "123456")
        ),
        (
            #"{"event":"paired","peerID":"p","name":"n","fingerprint":"f"}"#,
            .paired(peerID: "p", name: "n", fingerprint: "f")
        ),
        (#"{"event":"pairingEnded","peerID":"p","reason":"rejected"}"#, .pairingEnded(peerID: "p", reason: "rejected")),
        (
            #"{"event":"introduced","peerID":"p","name":"n","fingerprint":"f","holder":"q"}"#,
            .introduced(peerID: "p", name: "n", fingerprint: "f", by: "q")
        ),
        (#"{"event":"unpaired","peerID":"p","holder":"q"}"#, .unpaired(peerID: "p", by: "q")),
        (
            #"{"event":"messages","peerID":"p","count":5,"channel":"reliable"}"#,
            .messages(peerID: "p", count: 5, channel: .reliable)
        ),
    ]

    static func object(_ data: Data) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: data) as? NSDictionary)
    }

    @Test("every documented event reads as its case and is written back as the same object")
    func roundTrip() throws {
        for (text, event) in Self.golden {
            let decoded = try JSONDecoder().decode(ControlEvent.self, from: Data(text.utf8))
            #expect(decoded == event, "\(text)")
            #expect(try Self.object(JSONEncoder().encode(event)) == Self.object(Data(text.utf8)), "\(text)")
        }
    }

    @Test("an event of another name is other; one without a field its event has is no event")
    func unknownAndIncomplete() throws {
        let later = try JSONDecoder().decode(ControlEvent.self, from: Data(#"{"event":"later","time":"t"}"#.utf8))
        #expect(later == .other("later"))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ControlEvent.self, from: Data(#"{"event":"counter","peerID":"p"}"#.utf8))
        }
    }

    @Test("the daemon's event line carries the event's fields and when it was seen")
    func daemonLine() throws {
        let line = try #require(ControlDispatcher.encode(.session(.peerLost(PeerID(rawValue: 42)))))
        let object = try Self.object(line)
        #expect(object["event"] as? String == "peerLost")
        #expect(object["peerID"] as? String == Self.peer)
        #expect((object["time"] as? String)?.hasSuffix("Z") == true)
        #expect(DaemonEvent.app(.holder(view: 2, holder: nil)).control == .holder(view: 2, holder: nil))
        #expect(object["seq"] == nil, "numbered by the hub, not here")
        let numbered = try #require(ControlDispatcher.encode(.session(.peerLost(PeerID(rawValue: 42))), seq: 7))
        #expect(WatchResult.sequenceNumber(of: numbered) == 7)
        #expect(try JSONDecoder().decode(ControlEvent.self, from: numbered) == .peerLost(peerID: Self.peer))
        #expect(WatchResult.sequenceNumber(of: Data(#"{"event":"eventsMissed","count":3}"#.utf8)) == nil)
    }
}
