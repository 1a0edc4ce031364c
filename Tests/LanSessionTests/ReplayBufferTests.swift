import NIOCore
import Testing
import WireCodec

@testable import LanSession

@Suite("ReplayBuffer")
struct ReplayBufferTests {
    static func counts(in frames: ByteBuffer) -> [UInt64] {
        var decoder = StreamDecoder()
        decoder.append(contentsOf: Array(frames.readableBytesView))
        var result: [UInt64] = []
        while let count = (try? decoder.next())??.incrementCount { result.append(count) }
        return result
    }

    @Test("keeps frames until acknowledged and resends exactly those after a given number")
    func keepAndResend() {
        var buffer = ReplayBuffer(maxMessages: 100, maxBytes: 10_000)
        for sequence in 1...10 {
            let kept =
                (try! buffer.append(
                    .counterIncrement(count: UInt64(sequence)), sequence: UInt64(sequence), refusable: true)) != nil
            #expect(kept)
        }
        #expect(Self.counts(in: buffer.frames(after: 0)!) == Array(1...10))
        #expect(Self.counts(in: buffer.frames(after: 7)!) == [8, 9, 10])
        buffer.acknowledge(upTo: 4)
        #expect(buffer.count == 6)
        #expect(buffer.firstSequence == 5)
        #expect(Self.counts(in: buffer.frames(after: 4)!) == Array(5...10))
        #expect(buffer.frames(after: 3) == nil, "frame 4 is gone")
        #expect(buffer.frames(after: 10)?.readableBytes == 0)
        buffer.acknowledge(upTo: 10)
        #expect(buffer.count == 0)
        #expect(buffer.frames(after: 10)?.readableBytes == 0)
    }

    @Test("a state frame that does not fit is refused and nothing kept is dropped; a payload frame always goes in")
    func refusesStateKeepsPayloads() {
        var buffer = ReplayBuffer(maxMessages: 3, maxBytes: 10_000)
        _ = try! buffer.append(.counterIncrement(count: 1), sequence: 1, refusable: true)
        _ = try! buffer.append(.data([1, 2, 3]), sequence: 2, refusable: false)
        _ = try! buffer.append(.counterIncrement(count: 3), sequence: 3, refusable: true)
        let refused = (try! buffer.append(.counterIncrement(count: 4), sequence: 4, refusable: true)) == nil
        #expect(refused)
        #expect(buffer.count == 3, "nothing kept was dropped")
        #expect(buffer.frames(after: 0) != nil)
        // A payload is kept beyond the bound: it waited for room before it came, and is never dropped.
        let payload = (try! buffer.append(.data([4]), sequence: 4, refusable: false)) != nil
        #expect(payload)
        #expect(buffer.count == 4)
        #expect(!buffer.isHalfEmpty)
        buffer.acknowledge(upTo: 3)
        #expect(buffer.isHalfEmpty)
        let kept = (try! buffer.append(.counterIncrement(count: 5), sequence: 5, refusable: true)) != nil
        #expect(kept)
    }

    @Test("the byte bound holds too")
    func overflowByBytes() {
        var buffer = ReplayBuffer(maxMessages: 1_000, maxBytes: 7)
        let kept3 = (try! buffer.append(.counterIncrement(count: 1), sequence: 1, refusable: true)) != nil
        #expect(kept3)
        let kept4 = (try! buffer.append(.counterIncrement(count: 2), sequence: 2, refusable: true)) != nil
        #expect(kept4)
        let kept5 = (try! buffer.append(.counterIncrement(count: 3), sequence: 3, refusable: true)) != nil
        #expect(!kept5)
    }

    @Test("acknowledging a long run keeps memory bounded")
    func boundedMemory() {
        var buffer = ReplayBuffer(maxMessages: 1_000, maxBytes: 100_000)
        for sequence in 1...100_000 {
            let kept =
                (try! buffer.append(.counterIncrement(count: 1), sequence: UInt64(sequence), refusable: true)) != nil
            #expect(kept)
            if sequence % 50 == 0 { buffer.acknowledge(upTo: UInt64(sequence)) }
        }
        #expect(buffer.encoded.capacity <= 8_192)
    }

    @Test("a data payload is kept as the buffer it was given, counted as its frame, and resent as that frame")
    func dataPayloadsByReference() throws {
        var buffer = ReplayBuffer(maxMessages: 100, maxBytes: 100_000)
        let payload = ByteBuffer(bytes: [UInt8](repeating: 7, count: 1_000))
        _ = try buffer.append(.counterIncrement(count: 1), sequence: 1, refusable: true)
        try buffer.appendData(payload, sequence: 2)
        _ = try buffer.append(.counterIncrement(count: 3), sequence: 3, refusable: true)
        var kept: [(UInt64, ByteBuffer)] = []
        buffer.forEachFrame { sequence, frame in
            if case .data(let data) = frame { kept.append((sequence, data)) }
        }
        #expect(kept.count == 1 && kept[0].0 == 2)
        let shared = kept[0].1.withUnsafeReadableBytes { kept in
            payload.withUnsafeReadableBytes { $0.baseAddress == kept.baseAddress }
        }
        #expect(shared, "the same bytes, not a copy")
        let expected =
            try StreamFraming.encode(.counterIncrement(count: 1))
            + StreamFraming.encode(.data([UInt8](repeating: 7, count: 1_000)))
            + StreamFraming.encode(.counterIncrement(count: 3))
        #expect(buffer.bytes == expected.count)
        #expect(Array(buffer.frames(after: 0)!.readableBytesView) == expected)
        let lastTwo =
            try StreamFraming.encode(.data([UInt8](repeating: 7, count: 1_000)))
            + StreamFraming.encode(.counterIncrement(count: 3))
        #expect(Array(buffer.frames(after: 1)!.readableBytesView) == lastTwo)
        buffer.acknowledge(upTo: 2)
        #expect(buffer.bytes == (try StreamFraming.encode(.counterIncrement(count: 3))).count)
        buffer.acknowledge(upTo: 3)
        #expect(buffer.bytes == 0 && buffer.count == 0)
        #expect(throws: WireError.self) {
            try buffer.appendData(ByteBuffer(repeating: 0, count: Wire.maxDataLength + 1), sequence: 4)
        }
        #expect(buffer.count == 0, "a payload too long is not kept")
    }

    @Test("a payload that is a small slice of a large storage is kept as a copy of its own")
    func relayedSlicesAreCompacted() throws {
        var buffer = ReplayBuffer(maxMessages: 100, maxBytes: 100_000)
        let read = ByteBuffer(repeating: 3, count: 256 << 10)
        let slice = read.getSlice(at: 1_000, length: 100)!
        try buffer.appendData(slice, sequence: 1)
        buffer.forEachFrame { _, frame in
            guard case .data(let kept) = frame else {
                Issue.record("not kept as data")
                return
            }
            #expect(kept.storageCapacity < 4_096 && kept == slice)
        }
    }
}
