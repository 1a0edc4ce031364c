import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// What the core keeps about one peer, changed only through what happens to it.
@Suite("PeerRecord")
struct PeerRecordTests {
    let loop = EmbeddedEventLoop()

    func link() -> Link {
        Link(
            channel: EmbeddedChannel(loop: loop), role: .dialer, transport: LANTransport(),
            endpoint: Endpoint(transport: "lan", host: "10.0.0.7", port: 47_000), intendedPeer: nil,
            liveness: Liveness(heartbeatInterval: .milliseconds(250), timeout: .seconds(2), now: .now()))
    }

    func record() -> PeerRecord {
        PeerRecord(id: PeerID(2), replayBufferMessages: 16, replayBufferBytes: 1 << 16)
    }

    @Test("a peer connects, is published once per change, is lost and redialled, and leaves")
    func lifecycle() {
        let peer = record()
        let first = link()
        #expect(peer.connectionStateToPublish() == .notConnected(.notYetConnected))
        peer.add(first)
        #expect(peer.connecting())
        #expect(peer.state == .connecting && !peer.isMember)
        #expect(peer.connectionStateToPublish() == .connecting)
        #expect(peer.connectionStateToPublish() == nil)
        peer.add(link())
        #expect(!peer.connecting())  // a second path: still connecting

        peer.activate(first)
        #expect(peer.connected())
        #expect(!peer.connected())  // traffic moved to another path: no news
        #expect(peer.isConnected && peer.isMember && peer.active === first)
        #expect(peer.connectionStateToPublish() == .connected)

        #expect(peer.remove(first))
        #expect(peer.active == nil)
        #expect(!peer.remove(first))
        peer.lost(redialling: true)
        #expect(peer.state == .reconnecting && peer.isMember)
        #expect(peer.connectionStateToPublish() == .notConnected(.lost))

        peer.leave(.disconnected)
        peer.lost(redialling: true)
        #expect(peer.state == .lost && !peer.isMember)
        #expect(peer.connectionState == .notConnected(.disconnected))
        peer.showsUpAgain()
        #expect(!peer.left)
        peer.leave(nil)
        #expect(peer.left && peer.connectionState == .notConnected(.disconnected))
        #expect(peer.connecting() && !peer.left)
    }

    @Test("a hello names the peer and tells a restart by its incarnation")
    func admitted() {
        let peer = record()
        peer.named("from a record")
        #expect(peer.name == "from a record")
        let hello = Hello(
            peerID: PeerID(2), incarnation: 7, capabilities: [.resume], displayName: "b", sessionName: "s")
        #expect(!peer.admitted(hello, publicKey: nil, trust: nil))
        #expect(peer.name == "b" && peer.capabilities == [.resume] && peer.incarnation == 7)
        peer.named("ignored")
        #expect(peer.name == "b")
        #expect(!peer.admitted(hello, publicKey: [1, 2], trust: .open))
        #expect(peer.publicKey == [1, 2] && peer.trust == .open)
        var restarted = hello
        restarted.incarnation = 8
        #expect(peer.admitted(restarted, publicKey: nil, trust: .open))
        #expect(peer.publicKey == [1, 2])  // kept: an insecure hello proves no key
    }

    @Test("a member without a link is away from the first tick that sees it, until it connects")
    func away() {
        let peer = record()
        let start = NIODeadline.now()
        #expect(peer.away(at: start) == nil)  // not a member yet
        let first = link()
        peer.add(first)
        peer.activate(first)
        _ = peer.connected()
        #expect(peer.away(at: start) == nil)
        _ = peer.remove(first)
        peer.lost(redialling: true)
        #expect(peer.away(at: start + .seconds(1)) == .zero)
        #expect(peer.away(at: start + .seconds(4)) == .seconds(3))
        peer.add(first)
        peer.activate(first)
        _ = peer.connected()
        #expect(peer.away(at: start + .seconds(5)) == nil)
        _ = peer.remove(first)
        peer.lost(redialling: true)
        #expect(peer.away(at: start + .seconds(9)) == .zero)  // counted afresh
    }

    @Test("sequenced messages received are counted until an acknowledgement")
    func acknowledgements() {
        let peer = record()
        peer.receivedSequenced(payloadBytes: 100)
        peer.receivedSequenced(payloadBytes: 20)
        #expect(peer.unacknowledgedBytes == 120 && peer.reliable.receivedSinceAck == 2)
        #expect(peer.makeAck() == 2)
        #expect(peer.unacknowledgedBytes == 0 && peer.reliable.receivedSinceAck == 0)
    }
}
