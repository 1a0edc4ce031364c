import Testing
import WireCodec

@Suite("NamedWireValue")
struct NamedWireValueTests {
    @Test("a known value is described by its name, an unknown one by its number")
    func descriptions() {
        #expect(DeclineReason.unspecified.description == "unspecified")
        #expect(DeclineReason.notTrusted.description == "notTrusted")
        #expect(DeclineReason(rawValue: 9).description == "reason(9)")
        #expect(ByeReason.removed.description == "removed")
        #expect(ByeReason(rawValue: 5).description == "reason(5)")
        #expect(StreamKind.resource.description == "resource")
        #expect(StreamKind(rawValue: 2).description == "kind(2)")
        #expect(StreamStatus.declined.description == "declined")
        #expect(StreamStatus(rawValue: 4).description == "status(4)")
    }
}
