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
        while case .counterIncrement(let count)? = try? decoder.next() { result.append(count) }
        return result
    }

    @Test("keeps frames until acknowledged and resends exactly those after a given number")
    func keepAndResend() {
        var buffer = ReplayBuffer(maxMessages: 100, maxBytes: 10_000)
        for sequence in 1...10 {
            let kept =
                (try! buffer.append(.counterIncrement(count: UInt64(sequence)), sequence: UInt64(sequence))) != nil
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

    @Test("overflowing drops everything kept and counts it")
    func overflowByCount() {
        var buffer = ReplayBuffer(maxMessages: 3, maxBytes: 10_000)
        for sequence in 1...3 {
            let kept = (try! buffer.append(.counterIncrement(count: 1), sequence: UInt64(sequence))) != nil
            #expect(kept)
        }
        let kept1 = (try! buffer.append(.counterIncrement(count: 1), sequence: 4)) != nil
        #expect(!kept1)
        #expect(buffer.count == 0)
        #expect(buffer.dropped == 4)
        #expect(buffer.frames(after: 0) == nil)
        let kept2 = (try! buffer.append(.counterIncrement(count: 5), sequence: 5)) != nil
        #expect(kept2)
        #expect(Self.counts(in: buffer.frames(after: 4)!) == [5])
    }

    @Test("the byte bound holds too")
    func overflowByBytes() {
        var buffer = ReplayBuffer(maxMessages: 1_000, maxBytes: 7)
        let kept3 = (try! buffer.append(.counterIncrement(count: 1), sequence: 1)) != nil
        #expect(kept3)
        let kept4 = (try! buffer.append(.counterIncrement(count: 2), sequence: 2)) != nil
        #expect(kept4)
        let kept5 = (try! buffer.append(.counterIncrement(count: 3), sequence: 3)) != nil
        #expect(!kept5)
    }

    @Test("acknowledging a long run keeps memory bounded")
    func boundedMemory() {
        var buffer = ReplayBuffer(maxMessages: 1_000, maxBytes: 100_000)
        for sequence in 1...100_000 {
            let kept = (try! buffer.append(.counterIncrement(count: 1), sequence: UInt64(sequence))) != nil
            #expect(kept)
            if sequence % 50 == 0 { buffer.acknowledge(upTo: UInt64(sequence)) }
        }
        #expect(buffer.frames.capacity <= 8_192)
    }
}
