import BubblesAndCounter
import LanSession
import Testing
import WireCodec

@Suite("GCounter")
struct GCounterTests {
    let a = PeerID(1)
    let b = PeerID(2)
    let c = PeerID(3)

    @Test("local and remote deltas add up per peer")
    func deltas() {
        var counter = GCounter()
        counter.add(3, to: a)
        counter.add(2, to: b)
        counter.add(1, to: a)
        #expect(counter[a] == 4)
        #expect(counter[b] == 2)
        #expect(counter[c] == 0)
        #expect(counter.total == 6)
    }

    @Test("merging takes the larger count per peer and reports what grew")
    func merge() {
        var counter = GCounter(counts: [a: 5, b: 1])
        let grown = counter.merge([a: 3, b: 4, c: 7])
        #expect(counter.counts == [a: 5, b: 4, c: 7])
        #expect(grown == [b, c])
        #expect(counter.merge(counter.counts).isEmpty)
    }

    @Test("replicas converge whatever the order of deltas and merges")
    func convergence() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            // Three replicas; each peer presses some times; states are exchanged in a random order.
            var replicas = [GCounter(), GCounter(), GCounter()]
            let peers = [a, b, c]
            for (index, peer) in peers.enumerated() {
                for _ in 0..<Int.random(in: 0...20, using: &generator) { replicas[index].add(1, to: peer) }
            }
            for _ in 0..<10 {
                let from = Int.random(in: 0..<3, using: &generator)
                let to = Int.random(in: 0..<3, using: &generator)
                replicas[to].merge(replicas[from].counts)
            }
            for from in 0..<3 { for to in 0..<3 { replicas[to].merge(replicas[from].counts) } }
            #expect(replicas[0] == replicas[1])
            #expect(replicas[1] == replicas[2])
        }
    }

    @Test("entries are sorted by peer id")
    func entries() {
        let counter = GCounter(counts: [c: 1, a: 2])
        #expect(counter.entries == [CounterEntry(peerID: a, count: 2), CounterEntry(peerID: c, count: 1)])
    }
}
