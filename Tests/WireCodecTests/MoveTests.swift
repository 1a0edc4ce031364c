import Testing
import WireCodec

@Suite("Move sequence")
struct MoveTests {
    @Test("serial-number order wraps at 2^16")
    func serialOrder() {
        #expect(Move.isNewer(1, than: 0))
        #expect(!Move.isNewer(0, than: 1))
        #expect(!Move.isNewer(5, than: 5))
        #expect(Move.isNewer(0, than: 65_535))
        #expect(Move.isNewer(10, than: 65_530))
        #expect(!Move.isNewer(65_530, than: 10))
        #expect(Move.isNewer(0x7FFF, than: 0))
        #expect(!Move.isNewer(0x8000, than: 0))
    }
}
