import PropertyBased
import TestSupport
import Testing
import WireCodec

@testable import BubblesAndCounter

@Suite("CounterReplica")
struct CounterReplicaTests {
    static let one = PeerID(1)
    static let two = PeerID(2)
    static let three = PeerID(3)

    @Test("a relayed count and the replayed increments it already covers count once")
    func relayedStatePlusReplay() {
        // Host 2 learns host 1's 100 from host 3, then host 1's increments 1...100 arrive (a replay after a heal).
        var replica = CounterReplica(local: Self.two)
        let relayed = replica.receivedState([CounterEntry(peerID: Self.one, count: 100)], from: Self.three)
        #expect(relayed.grown == [Self.one])
        for count in 1...100 {
            let grew = replica.receivedIncrement(UInt64(count), from: Self.one)
            #expect(!grew)
        }
        #expect(replica.counter[Self.one] == 100)
        // ...and once more, as after another reconnect.
        for count in 1...100 { _ = replica.receivedIncrement(UInt64(count), from: Self.one) }
        #expect(replica.counter.total == 100)
    }

    @Test("this peer's own count grows only by its own increments")
    func ownEntryIsLocal() {
        var replica = CounterReplica(local: Self.one, counts: [Self.one: 10])
        let result = replica.receivedState([CounterEntry(peerID: Self.one, count: 5_000)], from: Self.two)
        #expect(result.claimedForLocal == 5_000)
        #expect(result.grown.isEmpty)
        let echoed = replica.receivedIncrement(5_000, from: Self.one)
        #expect(!echoed)
        #expect(replica.localCount == 10)
        let first = replica.commitLocal(11)
        let again = replica.commitLocal(11)
        #expect(first && !again)
        #expect(replica.localCount == 11)
    }

    @Test("anti-entropy sends a peer only what it may lack, never its own entry, and everything after it restarts")
    func missing() {
        var replica = CounterReplica(local: Self.one, counts: [Self.one: 3])
        _ = replica.receivedIncrement(7, from: Self.two)
        _ = replica.receivedIncrement(9, from: Self.three)
        // Two told us its own 7 and holds nothing else that we know of.
        let toTwo = replica.takeMissing(for: Self.two)
        #expect(toTwo == [CounterEntry(peerID: Self.one, count: 3), CounterEntry(peerID: Self.three, count: 9)])
        let again = replica.takeMissing(for: Self.two)
        #expect(again.isEmpty)
        // Three said what it holds: it lacks only two's count.
        _ = replica.receivedState(
            [CounterEntry(peerID: Self.one, count: 3), CounterEntry(peerID: Self.three, count: 9)], from: Self.three)
        #expect(replica.missing(for: Self.three) == [CounterEntry(peerID: Self.two, count: 7)])
        // A local increment sent to every member is not sent again by anti-entropy.
        replica.commitLocal(4)
        replica.sentLocal(to: Self.two)
        #expect(replica.missing(for: Self.two).isEmpty)
        // Two restarted: everything it may lack goes again.
        replica.forget(Self.two)
        #expect(
            replica.missing(for: Self.two) == [
                CounterEntry(peerID: Self.one, count: 4), CounterEntry(peerID: Self.three, count: 9),
            ])
    }

    /// What travels between replicas, in any order and any number of times.
    enum Delivery: Hashable {
        case increment(owner: Int, count: UInt64)
        case state(from: Int, entries: [CounterEntry])
    }

    /// A history: every peer's increments, and snapshots of states taken along the way, shuffled and duplicated.
    static let histories = Generator<[Delivery], Shrink.None<[Delivery]>> { rng in
        let peers = 4
        var truth = [UInt64](repeating: 0, count: peers)
        var sent: [Delivery] = []
        for _ in 0..<Int.random(in: 1...60, using: &rng) {
            let owner = Int.random(in: 0..<peers, using: &rng)
            truth[owner] += UInt64.random(in: 1...5, using: &rng)
            sent.append(.increment(owner: owner, count: truth[owner]))
            if Int.random(in: 0..<4, using: &rng) == 0 {
                // A relayed state: some peers' counts as they stood somewhere in the past (never above the truth).
                let entries = (0..<peers).filter { _ in Bool.random(using: &rng) }.map {
                    CounterEntry(peerID: PeerID(UInt64($0 + 1)), count: UInt64.random(in: 0...truth[$0], using: &rng))
                }
                sent.append(.state(from: Int.random(in: 0..<peers, using: &rng), entries: entries))
            }
        }
        var deliveries = sent
        for _ in 0..<Int.random(in: 0...sent.count, using: &rng) { deliveries.append(sent.randomElement(using: &rng)!) }
        deliveries.shuffle(using: &rng)
        // Finally every peer's true count arrives (at the latest with anti-entropy).
        deliveries += (0..<peers).map { .increment(owner: $0, count: truth[$0]) }.filter {
            if case .increment(_, let count) = $0 { count > 0 } else { false }
        }
        return deliveries
    }

    static func replay(_ deliveries: [Delivery], into replica: inout CounterReplica) {
        for delivery in deliveries {
            switch delivery {
            case .increment(let owner, let count):
                _ = replica.receivedIncrement(count, from: PeerID(UInt64(owner + 1)))
            case .state(let from, let entries):
                _ = replica.receivedState(entries, from: PeerID(UInt64(from + 1)))
            }
        }
    }

    @Test("any order, duplication and interleaving of states and increments gives the true counts")
    func mergeProperty() async {
        await propertyCheck(count: 2_000, input: Self.histories, Gen.int(in: 0...1_000_000)) { deliveries, seed in
            // The observer is a fifth peer; the truth is the largest count each owner announced.
            var truth: [PeerID: UInt64] = [:]
            for case .increment(let owner, let count) in deliveries {
                truth[PeerID(UInt64(owner + 1)), default: 0] = max(truth[PeerID(UInt64(owner + 1))] ?? 0, count)
            }
            var first = CounterReplica(local: PeerID(5))
            Self.replay(deliveries, into: &first)
            #expect(first.counter.counts.filter { $0.value > 0 } == truth)
            // Another order of the same deliveries (the final ones included) gives the same counter.
            var generator = SplitMix64(seed: UInt64(seed))
            var second = CounterReplica(local: PeerID(5))
            Self.replay(deliveries.shuffled(using: &generator), into: &second)
            #expect(second.counter == first.counter)
            // Delivering everything again changes nothing.
            Self.replay(deliveries, into: &second)
            #expect(second.counter == first.counter)
        }
    }

    @Test("replicas that only exchange what the other may lack converge, through a relay too")
    func antiEntropyConverges() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...1_000_000)) { seed in
            var generator = SplitMix64(seed: UInt64(seed))
            let ids = (1...4).map { PeerID(UInt64($0)) }
            var replicas = ids.map { CounterReplica(local: $0) }
            // A chain 0 - 1 - 2 - 3: neighbours exchange, nobody else.
            for _ in 0..<40 {
                let peer = Int.random(in: 0..<4, using: &generator)
                replicas[peer].commitLocal(replicas[peer].localCount + UInt64.random(in: 1...3, using: &generator))
                let from = Int.random(in: 0..<3, using: &generator)
                let (a, b) = Bool.random(using: &generator) ? (from, from + 1) : (from + 1, from)
                let entries = replicas[a].takeMissing(for: ids[b])
                _ = replicas[b].receivedState(entries, from: ids[a])
            }
            // Rounds of anti-entropy along the chain, both ways, until quiet.
            for _ in 0..<4 {
                for a in 0..<3 {
                    for (x, y) in [(a, a + 1), (a + 1, a)] {
                        _ = replicas[y].receivedState(replicas[x].takeMissing(for: ids[y]), from: ids[x])
                    }
                }
            }
            let truth = Dictionary(uniqueKeysWithValues: replicas.map { ($0.local, $0.localCount) }.filter { $0.1 > 0 })
            for replica in replicas { #expect(replica.counter.counts.filter { $0.value > 0 } == truth) }
        }
    }
}
