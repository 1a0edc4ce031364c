import BubblesAndCounter
import LanSession
import Testing
import WireCodec

@Suite("PlayerLayout")
struct PlayerLayoutTests {
    @Test("every member gets the index of its rank by peer id, whatever the order it was seen in")
    func deterministic() {
        let members = [PeerID(30), PeerID(10), PeerID(20), PeerID(40)]
        let expected: [PeerID: Int] = [PeerID(10): 0, PeerID(20): 1, PeerID(30): 2, PeerID(40): 3]
        for _ in 0..<20 {
            #expect(PlayerLayout(members: members.shuffled()).indexes == expected)
        }
        #expect(PlayerLayout(members: members).coordinator == PeerID(10))
    }

    @Test("wire entries round trip")
    func entries() {
        let layout = PlayerLayout(members: [PeerID(2), PeerID(1), PeerID(3)])
        #expect(layout.entries.map(\.playerIndex) == [0, 1, 2])
        #expect(PlayerLayout(entries: layout.entries) == layout)
    }
}
