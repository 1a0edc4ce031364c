import Foundation
import SessionControl
import Testing

/// `pair`'s reply as docs/control-protocol.md gives it: no `pairing` key when there is no pairing under way.
@Suite("pair's reply")
struct PairReplyTests {
    func keys(_ result: PairResult) throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(result)) as? [String: Any]
        return Set(try #require(object).keys)
    }

    @Test("without a pairing under way (a dial goes first, or both confirmed) the pairing key is absent, not null")
    func pairingAbsent() throws {
        #expect(try keys(PairResult(pairing: nil, confirmed: true, paired: true)) == ["confirmed", "paired"])
        let pairing = PairingResult(
            peerID: "0123456789abcdef", name: "alice", fingerprint: "ABCD-EFGH-IJKL-MNOP", code: "123456",
            requestedHere: true, confirmedHere: true, confirmedThere: false)
        #expect(
            try keys(PairResult(pairing: pairing, confirmed: true, paired: false)) == [
                "pairing", "confirmed", "paired",
            ])
    }
}
