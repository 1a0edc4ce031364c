import NIOCore
import Testing
import WireCodec

@testable import LanSession

/// Who is connected to whom, as a value with a fake clock.
@Suite("MembersGossip")
struct MembersGossipTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)

    @Test("members go to a peer once per change, at most once per interval")
    func exchange() {
        var gossip = MembersGossip(interval: .milliseconds(250), now: start)
        let early = gossip.exchangeDue(at: start + .milliseconds(100))
        let due = gossip.exchangeDue(at: start + .milliseconds(250))
        #expect(!early && due)
        #expect(gossip.isOutdated(PeerID(2)), "never told")
        gossip.told(PeerID(2))
        #expect(!gossip.isOutdated(PeerID(2)))
        gossip.changed()
        #expect(gossip.isOutdated(PeerID(2)))
        let again = gossip.exchangeDue(at: start + .milliseconds(300))
        #expect(!again, "not twice in one interval")
    }

    @Test("a recipient hears of every other connected peer, with endpoints that fit the wire")
    func members() {
        let known = [
            MembersGossip.Known(id: PeerID(2), name: "two", endpoints: [Endpoint(host: "10.0.0.2", port: 4000)]),
            MembersGossip.Known(
                id: PeerID(3), name: String(repeating: "é", count: 40),
                endpoints: [
                    Endpoint(host: String(repeating: "h", count: 64), port: 4000),
                    Endpoint(transport: "rfcomm", host: "00:AA:01:00:00:00", port: 5),
                ]),
        ]
        let members = MembersGossip.members(for: PeerID(2), among: known)
        #expect(members.map(\.peerID) == [PeerID(3)])
        #expect(members[0].displayName.utf8.count <= Wire.maxNameLength)
        #expect(
            members[0].endpoints == [MemberEndpoint(transport: "rfcomm", host: "00:AA:01:00:00:00", port: 5)],
            "a host too long for the wire is left out")
    }

    @Test("members heard become records per sender; those no longer named are withdrawn; self and sender skipped")
    func received() {
        var gossip = MembersGossip(interval: .milliseconds(250), now: start)
        let endpoint = MemberEndpoint(transport: "lan", host: "10.0.0.4", port: 4000)
        let first = gossip.received(
            [
                Member(peerID: PeerID(1), displayName: "me", endpoints: []),
                Member(peerID: PeerID(2), displayName: "sender", endpoints: []),
                Member(peerID: PeerID(4), displayName: "four", endpoints: [endpoint]),
                Member(peerID: PeerID(5), displayName: "five", endpoints: []),
            ], from: PeerID(2), local: PeerID(1))
        #expect(first.set.map(\.peer) == [PeerID(4), PeerID(5)])
        #expect(first.set[0].name == "member 0000000000000002 0000000000000004")
        #expect(first.set[0].endpoints == [Endpoint(host: "10.0.0.4", port: 4000)])
        #expect(first.withdrawn.isEmpty)
        let second = gossip.received(
            [Member(peerID: PeerID(4), displayName: "four", endpoints: [endpoint])], from: PeerID(2),
            local: PeerID(1))
        #expect(second.withdrawn == ["member 0000000000000002 0000000000000005"])
    }
}
