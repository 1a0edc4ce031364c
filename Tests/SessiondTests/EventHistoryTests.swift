import Foundation
import NIOCore
import SessionControl
import Testing

@testable import sessiond

/// The hub's history as a value: its bounds, and what a watcher that comes back with a number gets.
@Suite("EventHistory")
struct EventHistoryTests {
    /// A history holding the lines of events 1...`count` ("1", "2", ...).
    static func history(_ count: Int, maxLines: Int = 4, maxBytes: Int = 1 << 20) -> EventHistory {
        var history = EventHistory(run: "r1", maxLines: maxLines, maxBytes: maxBytes)
        for seq in 1...max(1, count) where count > 0 { history.append(.line(ByteBuffer(string: "\(seq)"))) }
        return history
    }

    /// The lines of `replay`'s entries, each checked against its number.
    static func texts(_ replay: EventHistory.Replay) -> [String] {
        zip(replay.firstSeq..., replay.entries).map { seq, entry in
            guard case .line(let line) = entry else { return "event \(seq)" }
            #expect(String(buffer: line) == "\(seq)", "numbered from the replay's first")
            return String(buffer: line)
        }
    }

    @Test("numbers go from 1; the oldest line goes past the count of lines or of bytes, the newest always stays")
    func bounds() {
        var history = EventHistory(run: "r1", maxLines: 3, maxBytes: 10)
        #expect(history.nextSeq == 1 && history.lastSeq == 0 && history.count == 0 && history.firstSeq == 1)
        for seq in 1...5 { history.append(.line(ByteBuffer(string: "\(seq)"))) }
        #expect(history.lastSeq == 5 && history.count == 3 && history.firstSeq == 3 && history.bytes == 3)
        history.append(.line(ByteBuffer(string: "sixsix")))  // 1 + 1 + 6 bytes: within 10
        #expect(history.count == 3 && history.firstSeq == 4 && history.bytes == 8)
        history.append(.line(ByteBuffer(string: "seven")))  // 6 + 5 bytes: over 10, the oldest two go
        #expect(history.count == 1 && history.firstSeq == 7 && history.bytes == 5)
        history.append(.line(ByteBuffer(string: "a line longer than every bound")))
        #expect(history.count == 1 && history.firstSeq == 8, "the newest is kept whatever its size")
        #expect(EventHistory.maxLines == 10_000)
    }

    @Test("without a number, nothing is replayed and nothing missed")
    func noSince() {
        for run in [nil, "r0"] {
            let replay = Self.history(3).replay(since: nil, run: run)
            #expect(replay.entries.isEmpty && replay.missed == nil && !replay.restarted)
        }
    }

    @Test("the lines after a number the history holds, each once, and nothing missed")
    func replayAfter() {
        let history = Self.history(6)  // holds 3...6
        #expect(Self.texts(history.replay(since: 2, run: nil)) == ["3", "4", "5", "6"])
        #expect(Self.texts(history.replay(since: 4, run: "r1")) == ["5", "6"])
        let upToDate = history.replay(since: 6, run: "r1")
        #expect(upToDate.entries.isEmpty && upToDate.missed == nil, "up to date: nothing")
        #expect(history.replay(since: 4, run: "r1").missed == nil)
        #expect(Self.texts(Self.history(2).replay(since: 0, run: nil)) == ["1", "2"], "0: from the first")
    }

    @Test("a number older than the history: the exact count missed, then every line held")
    func tooOld() {
        let history = Self.history(10)  // holds 7...10
        let replay = history.replay(since: 3, run: "r1")
        #expect(replay.missed == 3, "4, 5 and 6")
        #expect(!replay.restarted)
        #expect(Self.texts(replay) == ["7", "8", "9", "10"])
        #expect(history.replay(since: 0, run: nil).missed == 6)
        #expect(history.replay(since: 5, run: nil).missed == 1)
    }

    @Test("another run, or a number past this run's last: restarted, this run's lines not held counted, then the rest")
    func restarted() {
        let fresh = Self.history(2).replay(since: 900, run: "r0")
        #expect(fresh.restarted && fresh.missed == 0 && Self.texts(fresh) == ["1", "2"])
        let old = Self.history(10).replay(since: 3, run: "r0")
        #expect(old.restarted && old.missed == 6 && Self.texts(old) == ["7", "8", "9", "10"])
        let past = Self.history(2).replay(since: 3, run: nil)
        #expect(past.restarted && past.missed == 0 && past.entries.count == 2, "no number of this run's")
        let empty = Self.history(0).replay(since: 5, run: "r0")
        #expect(empty.restarted && empty.missed == 0 && empty.entries.isEmpty)
    }

    @Test("an event kept unencoded counts for about its line: a data message for its base64 and its text")
    func eventSizes() {
        var history = EventHistory(run: "r1", maxLines: 10, maxBytes: 3_600)
        history.append(.event(.peerLost(peerID: "0000000000000002"), at: Date()))
        #expect(history.bytes == 256)
        history.append(
            .event(.data(peerID: "0000000000000002", data: Data(count: 1_000), channel: .reliable), at: Date()))
        #expect(history.bytes == 256 + 3_256)
        history.append(.event(.peerLost(peerID: "0000000000000002"), at: Date()))
        #expect(history.count == 2 && history.firstSeq == 2, "over 3,600 bytes: the oldest went")
    }

    @Test("a run id is 16 hex digits, new each time")
    func runs() {
        let run = EventHistory.newRun()
        #expect(run.count == 16 && run.allSatisfy(\.isHexDigit))
        #expect(run != EventHistory.newRun())
    }
}
