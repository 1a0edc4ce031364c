import BubblesAndCounterGATT
import Testing

@testable import sessiond

/// The centrals' commands on their way to the apps: queued in order, refused (never kept in place of an older one)
/// when the queue is full.
@Suite("GATTService")
struct GATTServiceTests {
    @Test("a command that finds no room is refused; the ones that wait stay, in order")
    func full() async throws {
        let (commands, continuation) = AsyncStream.makeStream(
            of: GATTCommand.self, bufferingPolicy: .bufferingOldest(2))
        let take = GATTService.taker(continuation)
        try take([0x02, 0x24, 0x00])  // pickUp 0
        try take([0x02, 0x27, 0x03])  // increment 3
        #expect(throws: (any Error).self, "the third has no room") { try take([0x02, 0x24, 0x01]) }
        #expect(throws: (any Error).self, "not a command") { try take([0x01]) }
        continuation.finish()
        var taken: [GATTCommand] = []
        for await command in commands { taken.append(command) }
        #expect(taken == [.pickUp(view: 0), .increment(count: 3)])
    }
}
