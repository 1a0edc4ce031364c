import LanSession
import LanSessionRFCOMM
import Testing

@Suite("RFCOMMTransport")
struct RFCOMMTransportTests {
    @Test("without Bluetooth in the kernel, asking for adapters says so in one sentence")
    func adapters() {
        do {
            let adapters = try RFCOMMTransport.adapters()
            #expect(adapters.allSatisfy { $0.name.hasPrefix("hci") && $0.address.count == 17 })
        } catch {
            #expect(error.message.contains("no Bluetooth") || error.message.contains("Bluetooth socket"), "\(error)")
        }
    }

    @Test("a channel outside 1...30 is refused before any socket is opened")
    func channels() {
        #expect(throws: SessionError.self) { try RFCOMMTransport(channel: 0) }
        #expect(throws: SessionError.self) { try RFCOMMTransport(channel: 31) }
    }

    @Test("an RFCOMM endpoint reads as ADDRESS/CHANNEL")
    func endpoint() {
        #expect(
            Endpoint(transport: RFCOMMTransport.name, host: "00:AA:01:00:00:00", port: 5).description
                == "00:AA:01:00:00:00/5")
    }
}
