import Testing
import WireCodec

@Suite("PeerID")
struct PeerIDTests {
    @Test("hex form round trips and is 16 digits")
    func hexForm() {
        let id = PeerID(0xAB)
        #expect(id.description == "00000000000000ab")
        #expect(PeerID(hex: id.description) == id)
        #expect(PeerID(hex: "ab") == nil)
        #expect(PeerID(hex: "zzzzzzzzzzzzzzzz") == nil)
    }

    @Test("random identities differ")
    func random() {
        #expect(Set((0..<100).map { _ in PeerID.random() }).count == 100)
    }
}
