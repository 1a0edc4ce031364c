import Logging
import SessionControl
import TestSupport
import Testing

@testable import sessiond

/// The stream desk's listeners: a listener that falls behind is ended, not left with a gap it cannot see.
@Suite("StreamDesk")
struct StreamDeskTests {
    static func report(_ id: UInt32) -> StreamResult {
        StreamResult(peerID: "0000000000000002", name: "s", id: id, direction: "receiving", phase: "opened", bytes: 0)
    }

    @Test("a listener that does not keep up gets the reports that waited, then its stream ends; the others go on")
    func fallsBehind() async throws {
        let desk = StreamDesk(session: try makeSession(1), logger: Logger(label: "test"))
        let slow = desk.subscribe(bufferSize: 2)
        var fast = desk.subscribe(bufferSize: 8).makeAsyncIterator()
        for id in 1...3 { desk.publish(Self.report(UInt32(id))) }
        var seen: [UInt32] = []
        for await report in slow { seen.append(report.id) }
        #expect(seen == [1, 2], "the oldest kept; the third found no room and ended the stream")
        for id in 1...3 { #expect(await fast.next()?.id == UInt32(id)) }
        desk.publish(Self.report(4))
        #expect(await fast.next()?.id == 4)
    }
}
